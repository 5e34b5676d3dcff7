"""A Trainer subclass builds its own length-bucketed eval DataLoader with persistent workers on every evaluate() call

Source: https://github.com/huggingface/transformers/issues/30943
Style: hf-trainer
Kind: a DataLoader with persistent workers built and prepared on every evaluation: each evaluate() creates a new loader whose worker processes stay alive (and are kept referenced by the accelerator), so host memory and process count grow with every evaluation while compute_metrics runs
"""
import numpy as np
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader, Sampler
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding, Trainer,
                          TrainingArguments)


class LengthBucketSampler(Sampler):
    def __init__(self, lengths, batch_size):
        order = np.argsort(lengths)
        self.batches = [order[i:i + batch_size].tolist() for i in range(0, len(order), batch_size)]

    def __iter__(self):
        return iter(self.batches)

    def __len__(self):
        return len(self.batches)


class BucketedEvalTrainer(Trainer):
    def get_eval_dataloader(self, eval_dataset=None):
        cache = self.__dict__.setdefault("_bucketed_eval_loaders", {})
        key = "eval" if eval_dataset is None else id(eval_dataset)
        if self.args.dataloader_persistent_workers and key in cache:
            return cache[key]
        dataset = eval_dataset if eval_dataset is not None else self.eval_dataset
        dataset = self._remove_unused_columns(dataset, description="evaluation")
        sampler = LengthBucketSampler([len(ids) for ids in dataset["input_ids"]], self.args.eval_batch_size)
        loader = DataLoader(dataset, batch_sampler=sampler, collate_fn=self.data_collator,
                            num_workers=self.args.dataloader_num_workers, pin_memory=True,
                            persistent_workers=self.args.dataloader_persistent_workers)
        loader = self.accelerator.prepare(loader)
        if self.args.dataloader_persistent_workers:
            cache[key] = loader
        return loader


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    preds = logits.argmax(-1)
    tp = ((preds == 1) & (labels == 1)).sum()
    precision = tp / max((preds == 1).sum(), 1)
    recall = tp / max((labels == 1).sum(), 1)
    return {"accuracy": float((preds == labels).mean()),
            "f1": float(2 * precision * recall / max(precision + recall, 1e-9))}


def main():
    name = "microsoft/deberta-v3-base"
    tokenizer = AutoTokenizer.from_pretrained(name)
    raw = load_dataset("imdb")
    encoded = raw.map(lambda b: tokenizer(b["text"], truncation=True, max_length=512), batched=True,
                      remove_columns=["text"])
    args = TrainingArguments(
        output_dir="deberta-imdb",
        per_device_train_batch_size=16,
        per_device_eval_batch_size=64,
        num_train_epochs=3,
        eval_strategy="steps",
        eval_steps=200,
        logging_steps=50,
        dataloader_num_workers=8,
        dataloader_persistent_workers=True,
        bf16=torch.cuda.is_available(),
        report_to="none",
    )
    trainer = BucketedEvalTrainer(
        model=AutoModelForSequenceClassification.from_pretrained(name, num_labels=2),
        args=args,
        train_dataset=encoded["train"],
        eval_dataset=encoded["test"].shuffle(seed=0).select(range(5_000)),
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=compute_metrics,
    )
    trainer.train()


if __name__ == "__main__":
    main()
