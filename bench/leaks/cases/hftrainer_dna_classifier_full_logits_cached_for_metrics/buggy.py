"""DNA sequence classifier fine-tuned with the Trainer: compute_metrics reduces the logits itself, so the evaluation loop caches every batch's raw model output

Source: https://github.com/MAGICS-LAB/DNABERT_2/pull/109
Source: https://discuss.huggingface.co/t/cuda-out-of-memory-when-using-trainer-with-compute-metrics/2941
Style: hf-trainer
Kind: device memory grows during evaluation: with `compute_metrics` set and no `preprocess_logits_for_metrics`, the Trainer keeps the model's whole output (logits plus the extra tuple entries the custom model returns) for every evaluation batch before compute_metrics takes the argmax; the fix moves the argmax into `preprocess_logits_for_metrics`, so only label ids are cached
"""
import numpy as np
import sklearn.metrics
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments


class SupervisedDataset(torch.utils.data.Dataset):
    def __init__(self, csv_path, tokenizer, max_length=512):
        rows = [line.strip().split(",") for line in open(csv_path)][1:]
        texts, labels = zip(*[(r[0], int(r[1])) for r in rows])
        enc = tokenizer(list(texts), truncation=True, max_length=max_length, padding="longest", return_tensors="pt")
        self.input_ids, self.attention_mask = enc["input_ids"], enc["attention_mask"]
        self.labels = torch.tensor(labels)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.input_ids[i], "attention_mask": self.attention_mask[i], "labels": self.labels[i]}


def calculate_metric_with_sklearn(predictions, labels):
    valid = labels != -100
    return {
        "accuracy": sklearn.metrics.accuracy_score(labels[valid], predictions[valid]),
        "f1": sklearn.metrics.f1_score(labels[valid], predictions[valid], average="macro", zero_division=0),
        "mcc": sklearn.metrics.matthews_corrcoef(labels[valid], predictions[valid]),
    }


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    if isinstance(logits, tuple):
        logits = logits[0]
    predictions = np.argmax(logits, axis=-1)
    return calculate_metric_with_sklearn(predictions, labels)


def main(model_name="zhihan1996/DNABERT-2-117M", data_dir="data/promoter", out_dir="output/promoter"):
    tokenizer = AutoTokenizer.from_pretrained(model_name, model_max_length=512, trust_remote_code=True)
    model = AutoModelForSequenceClassification.from_pretrained(model_name, num_labels=2, trust_remote_code=True)
    train_set = SupervisedDataset(f"{data_dir}/train.csv", tokenizer)
    dev_set = SupervisedDataset(f"{data_dir}/dev.csv", tokenizer)
    args = TrainingArguments(
        output_dir=out_dir,
        per_device_train_batch_size=32,
        per_device_eval_batch_size=64,
        learning_rate=3e-5,
        num_train_epochs=5,
        eval_strategy="steps",
        eval_steps=200,
        save_steps=200,
        load_best_model_at_end=True,
        metric_for_best_model="mcc",
        fp16=True,
    )
    trainer = Trainer(  # leak: LL202
        model=model,
        args=args,
        train_dataset=train_set,
        eval_dataset=dev_set,
        compute_metrics=compute_metrics,
    )
    trainer.train()
    print(trainer.evaluate())
    trainer.save_model(out_dir)
