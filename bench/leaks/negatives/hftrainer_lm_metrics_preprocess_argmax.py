"""Masked-LM fine-tuning with an accuracy metric: logits are reduced to their argmax before the Trainer caches them

Source: https://github.com/huggingface/transformers/pull/15473
Style: hf-trainer
Kind: negative: predictions kept over a whole evaluation for compute_metrics (only token ids, via preprocess_logits_for_metrics, and offloaded every 20 steps)
"""
import numpy as np
from datasets import Dataset
from transformers import (AutoModelForMaskedLM, AutoTokenizer, DataCollatorForLanguageModeling, Trainer,
                          TrainingArguments)


def preprocess_logits_for_metrics(logits, labels):
    if isinstance(logits, tuple):
        logits = logits[0]
    return logits.argmax(dim=-1)


def compute_metrics(eval_preds):
    preds, labels = eval_preds
    mask = labels != -100
    return {"mlm_accuracy": float(np.mean(preds[mask] == labels[mask]))}


def main():
    tokenizer = AutoTokenizer.from_pretrained("roberta-base")
    model = AutoModelForMaskedLM.from_pretrained("roberta-base")
    text = ["clinical notes are long and full of abbreviations " * 40 for _ in range(40_000)]
    ds = Dataset.from_dict({"text": text}).map(lambda b: tokenizer(b["text"], truncation=True, max_length=512),
                                              batched=True, remove_columns=["text"])
    split = ds.train_test_split(test_size=0.1, seed=0)
    args = TrainingArguments("out/roberta-clinical", per_device_train_batch_size=8, per_device_eval_batch_size=32,
                             evaluation_strategy="steps", eval_steps=2000, eval_accumulation_steps=20,
                             num_train_epochs=2, report_to=[])
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=split["train"],
        eval_dataset=split["test"],
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15),
        compute_metrics=compute_metrics,
        preprocess_logits_for_metrics=preprocess_logits_for_metrics,
    )
    trainer.train()
    print(trainer.evaluate())


if __name__ == "__main__":
    main()
