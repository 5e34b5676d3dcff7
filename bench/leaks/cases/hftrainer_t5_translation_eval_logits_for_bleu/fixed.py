"""T5 translation fine-tuned with Seq2SeqTrainer; BLEU is computed from the argmax of the evaluation logits

Source: https://github.com/huggingface/transformers/issues/13597
Style: hf-trainer
Kind: device memory grows without a graph during evaluation: without predict_with_generate the trainer's evaluation loop gathers every batch's model outputs (full-vocabulary logits [batch, 256, 32k] plus the encoder's last hidden state) for compute_metrics, on the GPU until the loop ends; evaluation runs out of memory although training fits (maintainer: predictions are kept on the device by default; offload them every eval_accumulation_steps)
"""
import numpy as np
from datasets import Dataset
from evaluate import load as load_metric
from transformers import (AutoModelForSeq2SeqLM, AutoTokenizer, DataCollatorForSeq2Seq, Seq2SeqTrainer,
                          Seq2SeqTrainingArguments)

MODEL = "t5-base"
SRC_LEN, TGT_LEN = 320, 256

tokenizer = AutoTokenizer.from_pretrained(MODEL)
sacrebleu = load_metric("sacrebleu")


def preprocess(batch):
    inputs = tokenizer(["translate English to German: " + s for s in batch["en"]], max_length=SRC_LEN,
                       truncation=True, padding="max_length")
    labels = tokenizer(text_target=batch["de"], max_length=TGT_LEN, truncation=True, padding="max_length")
    inputs["labels"] = [[t if t != tokenizer.pad_token_id else -100 for t in seq] for seq in labels["input_ids"]]
    return inputs


def compute_metrics(pred):
    label_ids = pred.label_ids
    pred_ids = pred.predictions
    label_ids[label_ids == -100] = tokenizer.pad_token_id
    label_str = tokenizer.batch_decode(label_ids, skip_special_tokens=True)
    pred_str = tokenizer.batch_decode(np.argmax(pred_ids[0], axis=-1), skip_special_tokens=True)
    result = sacrebleu.compute(predictions=pred_str, references=[[ref] for ref in label_str])
    return {"bleu": result["score"]}


def load_pairs(n):
    rng = np.random.default_rng(0)
    words = ["the", "house", "is", "small", "green", "tree", "we", "see", "a", "river", "near", "old", "town"]
    en = [" ".join(rng.choice(words, size=40)) for _ in range(n)]
    return Dataset.from_dict({"en": en, "de": [s.upper() for s in en]})


def main():
    model = AutoModelForSeq2SeqLM.from_pretrained(MODEL)
    train_ds = load_pairs(20000).map(preprocess, batched=True, remove_columns=["en", "de"])
    eval_ds = load_pairs(500).map(preprocess, batched=True, remove_columns=["en", "de"])
    args = Seq2SeqTrainingArguments(
        output_dir="t5-en-de",
        per_device_train_batch_size=8,
        per_device_eval_batch_size=4,
        eval_accumulation_steps=8,
        learning_rate=3e-4,
        num_train_epochs=3,
        eval_strategy="steps",
        eval_steps=2000,
        save_steps=2000,
        logging_steps=100,
        bf16=True,
        report_to="none",
    )
    trainer = Seq2SeqTrainer(
        model=model,
        args=args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
        compute_metrics=compute_metrics,
    )
    trainer.train()
    print(trainer.evaluate())


if __name__ == "__main__":
    main()
