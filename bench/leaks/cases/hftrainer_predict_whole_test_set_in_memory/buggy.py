"""Fine-tuned EHR transformer classifier: `do_predict` calls `trainer.predict` on a very large held-out cohort and writes the scores afterwards

Source: https://github.com/cumc-dbmi/cehrbert/pull/55
Style: hf-trainer
Kind: device memory grows without a graph: `Trainer.predict` gathers the logits and labels of every batch of the test set before returning them (on the GPU, with no eval_accumulation_steps), so memory grows with the size of the cohort; large test sets run out of memory
"""
import os

import numpy as np
import pandas as pd
import torch
from datasets import load_from_disk
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    Trainer,
    TrainingArguments,
)


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    probs = 1.0 / (1.0 + np.exp(-logits[:, 1] + logits[:, 0]))
    preds = (probs > 0.5).astype(int)
    return {"accuracy": float((preds == labels).mean())}


def build_trainer(model_dir, output_dir, eval_batch_size=64):
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir, num_labels=2)
    args = TrainingArguments(
        output_dir=output_dir,
        per_device_eval_batch_size=eval_batch_size,
        dataloader_num_workers=4,
        report_to="none",
        fp16=torch.cuda.is_available(),
    )
    return Trainer(
        model=model,
        args=args,
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=compute_metrics,
    ), tokenizer


def do_predict(trainer, test_dataset, output_dir):
    person_ids = test_dataset["person_id"]
    index_dates = test_dataset["index_date"]
    test_dataset = test_dataset.remove_columns(["person_id", "index_date"])
    output = trainer.predict(test_dataset)  # leak: new:device-accumulation
    logits = output.predictions
    probs = torch.softmax(torch.from_numpy(logits).float(), dim=-1)[:, 1].numpy()
    frame = pd.DataFrame({
        "person_id": person_ids,
        "index_date": index_dates,
        "boolean_prediction_probability": probs,
        "label": output.label_ids,
    })
    os.makedirs(os.path.join(output_dir, "test_predictions"), exist_ok=True)
    frame.to_parquet(os.path.join(output_dir, "test_predictions", "predictions.parquet"))
    print(output.metrics)


def main():
    model_dir = "runs/cehrbert_readmission/checkpoint-best"
    output_dir = "runs/cehrbert_readmission/predict"
    trainer, _ = build_trainer(model_dir, output_dir)
    test_dataset = load_from_disk("data/readmission_tokenized")["test"]
    do_predict(trainer, test_dataset, output_dir)


if __name__ == "__main__":
    main()
