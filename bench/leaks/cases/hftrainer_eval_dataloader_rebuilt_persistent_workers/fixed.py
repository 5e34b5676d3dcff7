"""A Trainer subclass builds and prepares a fresh eval DataLoader with persistent workers at every evaluation

Source: https://github.com/huggingface/sentence-transformers/pull/3895
Source: https://github.com/huggingface/transformers/issues/28469
Style: hf-trainer
Kind: a DataLoader (with its persistent worker processes) created per evaluation and kept referenced by the accelerator: workers and host memory pile up
"""
import torch
from datasets import Dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments
from transformers.trainer_utils import seed_worker


class GroupedEvalTrainer(Trainer):
    """Evaluates on several named splits; each split gets a length-grouped sampler."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._eval_loaders = {}

    def get_eval_dataloader(self, eval_dataset=None):
        key = eval_dataset if isinstance(eval_dataset, str) else "eval"
        if self.args.dataloader_persistent_workers and key in self._eval_loaders:
            return self._eval_loaders[key]
        dataset = eval_dataset if eval_dataset is not None else self.eval_dataset
        if isinstance(dataset, str):
            dataset = self.eval_dataset[dataset]
        dataset = self._remove_unused_columns(dataset, description="evaluation")
        lengths = [len(ids) for ids in dataset["input_ids"]]
        order = sorted(range(len(lengths)), key=lengths.__getitem__)
        loader = DataLoader(
            dataset,
            batch_size=self.args.eval_batch_size,
            sampler=order,
            collate_fn=self.data_collator,
            num_workers=self.args.dataloader_num_workers,
            persistent_workers=self.args.dataloader_persistent_workers,
            worker_init_fn=seed_worker,
        )
        loader = self.accelerator.prepare(loader)
        if self.args.dataloader_persistent_workers:
            self._eval_loaders[key] = loader
        return loader


def make_split(tokenizer, n, seed):
    g = torch.Generator().manual_seed(seed)
    words = ["good", "bad", "fine", "awful", "great", "poor"]
    texts = [" ".join(words[i] for i in torch.randint(0, 6, (int(torch.randint(5, 120, (1,), generator=g)),), generator=g))
             for _ in range(n)]
    labels = [int(t.count("good") + t.count("great") > t.count("bad") + t.count("awful")) for t in texts]
    return Dataset.from_dict({"text": texts, "label": labels}).map(lambda b: tokenizer(b["text"], truncation=True), batched=True)


def main():
    tokenizer = AutoTokenizer.from_pretrained("distilbert-base-uncased")
    model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2)
    train = make_split(tokenizer, 50_000, 0)
    evals = {"dev": make_split(tokenizer, 2_000, 1), "hard": make_split(tokenizer, 2_000, 2)}
    args = TrainingArguments("out/grouped-eval", per_device_train_batch_size=32, per_device_eval_batch_size=64,
                             evaluation_strategy="steps", eval_steps=100, num_train_epochs=2,
                             dataloader_num_workers=8, dataloader_persistent_workers=True, report_to=[])
    trainer = GroupedEvalTrainer(model=model, args=args, train_dataset=train, eval_dataset=evals, tokenizer=tokenizer)
    trainer.train()


if __name__ == "__main__":
    main()
