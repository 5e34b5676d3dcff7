"""A Trainer keeps its evaluation DataLoader between evaluations but hands the Accelerator the unprepared one, which it wraps anew every time

Source: https://github.com/huggingface/transformers/pull/39717
Style: hf-trainer
Kind: a prepared DataLoader (with its persistent worker processes) created per evaluation and kept referenced by the accelerator: worker processes pile up until the fork bomb
"""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForTokenClassification, Trainer, TrainingArguments


class TaggedSentences(Dataset):
    def __init__(self, n, seq_len=128, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(1000, 28000, (n, seq_len), generator=g)
        self.tags = torch.randint(0, 9, (n, seq_len), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.tags[i]}


class NerTrainer(Trainer):
    def get_eval_dataloader(self, eval_dataset=None):
        if getattr(self, "_eval_loader", None) is not None and self.args.dataloader_persistent_workers:
            return self.accelerator.prepare(self._eval_loader)  # leak: new:dataloader-per-call
        dataset = eval_dataset if eval_dataset is not None else self.eval_dataset
        loader = DataLoader(
            dataset,
            batch_size=self.args.per_device_eval_batch_size,
            num_workers=self.args.dataloader_num_workers,
            persistent_workers=self.args.dataloader_persistent_workers,
            pin_memory=self.args.dataloader_pin_memory,
        )
        if self.args.dataloader_persistent_workers:
            self._eval_loader = loader
        return self.accelerator.prepare(loader)


def main():
    model = AutoModelForTokenClassification.from_pretrained("bert-base-cased", num_labels=9)
    args = TrainingArguments(
        "ner-out",
        per_device_train_batch_size=16,
        per_device_eval_batch_size=64,
        eval_strategy="steps",
        eval_steps=50,
        max_steps=20_000,
        dataloader_num_workers=4,
        dataloader_persistent_workers=True,
    )
    trainer = NerTrainer(model=model, args=args, train_dataset=TaggedSentences(50_000), eval_dataset=TaggedSentences(2_000, seed=1))
    trainer.train()


if __name__ == "__main__":
    main()
