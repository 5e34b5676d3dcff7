"""Sequence classification with the HF Trainer: the model is loaded with output_attentions=True, so evaluation gathers every layer's attentions on the GPU

Source: https://github.com/huggingface/transformers/issues/25487
Style: hf-trainer
Kind: device memory grows without a graph over an evaluation: with `output_attentions=True` each evaluation batch returns the attention maps of all layers, and the Trainer's evaluation loop concatenates them with the logits on the GPU for the whole validation set (with eval_accumulation_steps they pile up in host RAM instead)
"""
import numpy as np
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding,
                          Trainer, TrainingArguments)

CHECKPOINT = "bert-base-uncased"


def tokenize_fn(tokenizer):
    def _fn(batch):
        return tokenizer(batch["sentence1"], batch["sentence2"], truncation=True, max_length=256)
    return _fn


def compute_metrics(eval_pred):
    logits = eval_pred.predictions
    if isinstance(logits, tuple):
        logits = logits[0]
    preds = np.argmax(logits, axis=-1)
    return {"accuracy": float((preds == eval_pred.label_ids).mean())}


def main(output_dir="mrpc-bert"):
    tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)
    raw = load_dataset("glue", "mrpc")
    data = raw.map(tokenize_fn(tokenizer), batched=True)
    model = AutoModelForSequenceClassification.from_pretrained(CHECKPOINT, num_labels=2, output_attentions=True)  # leak: new:device-accumulation
    args = TrainingArguments(
        output_dir=output_dir,
        per_device_train_batch_size=32,
        per_device_eval_batch_size=64,
        num_train_epochs=3,
        learning_rate=2e-5,
        eval_strategy="steps",
        eval_steps=200,
        logging_steps=50,
        save_strategy="no",
        report_to=[],
    )
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=data["train"],
        eval_dataset=data["validation"],
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=compute_metrics,
    )
    trainer.train()
    print(trainer.evaluate())


if __name__ == "__main__":
    main()
