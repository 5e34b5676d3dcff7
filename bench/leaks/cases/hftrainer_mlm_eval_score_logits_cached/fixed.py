"""Masked-LM fine-tuning with a masked-token accuracy metric runs out of memory at the first evaluation

Source: https://github.com/huggingface/transformers/issues/8476
Style: hf-trainer
Kind: device memory grows without a graph: the Trainer keeps [eval size, seq len, vocab] logits of the whole eval set for compute_metrics, which only needs their argmax
"""
from datasets import load_dataset
from transformers import (CamembertForMaskedLM, CamembertTokenizerFast, DataCollatorForLanguageModeling, Trainer,
                          TrainingArguments)


def keep_predicted_ids(logits, labels):
    return logits.argmax(dim=-1)


def masked_accuracy(eval_pred):
    predictions, labels = eval_pred
    masked = labels != -100
    return {"masked_accuracy": float((predictions[masked] == labels[masked]).mean())}


def tokenize(tokenizer, split):
    return split.map(lambda batch: tokenizer(batch["text"], truncation=True, max_length=256), batched=True,
                     remove_columns=["text"])


def main():
    tokenizer = CamembertTokenizerFast.from_pretrained("camembert-base")
    model = CamembertForMaskedLM.from_pretrained("camembert-base")
    raw = load_dataset("text", data_files={"train": "corpus_train.txt", "validation": "corpus_valid.txt"})
    training_args = TrainingArguments(
        seed=92,
        output_dir="./results",
        num_train_epochs=3,
        learning_rate=1e-4,
        evaluation_strategy="steps",
        per_device_train_batch_size=8,
        per_device_eval_batch_size=16,
        eval_steps=25,
        logging_dir="./logs",
    )
    trainer = Trainer(
        model=model,
        args=training_args,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=True, mlm_probability=0.15),
        train_dataset=tokenize(tokenizer, raw["train"]),
        eval_dataset=tokenize(tokenizer, raw["validation"]),
        compute_metrics=masked_accuracy,
        preprocess_logits_for_metrics=keep_predicted_ids,
    )
    trainer.train()


if __name__ == "__main__":
    main()
