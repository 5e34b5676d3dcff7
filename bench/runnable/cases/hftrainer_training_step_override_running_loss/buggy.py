"""A Trainer subclass sums the step loss into an attribute in its training_step override

Source: https://github.com/huggingface/transformers/pull/6999
Style: hf-trainer
Kind: per-step work the analysis does not see as a loop: Trainer.training_step override accumulates the loss
Runnable from: bench/leaks/cases/hftrainer_training_step_override_running_loss
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class MiniTrainer:
    """The part of transformers.Trainer this case needs: a loop calling training_step, then log."""

    def __init__(self, model, train_dataset, batch_size=16, epochs=1, logging_steps=500, accumulation=1):
        self.model, self.train_dataset = model, train_dataset
        self.batch_size, self.epochs, self.logging_steps = batch_size, epochs, logging_steps
        self.gradient_accumulation_steps = accumulation
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)

    def train(self):
        loader = DataLoader(self.train_dataset, batch_size=self.batch_size, shuffle=True)
        step = 0
        for _ in range(self.epochs):
            for input_ids, labels in loader:
                self.training_step(self.model, {"input_ids": input_ids, "labels": labels})
                self.optimizer.step()
                self.optimizer.zero_grad()
                step += 1
                if step % self.logging_steps == 0:
                    self.log({"step": step})

    def log(self, logs):
        print(logs)


class Classifier(nn.Module):
    def __init__(self, vocab=1000, dim=64):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim)
        self.head = nn.Linear(dim, 2)

    def forward(self, input_ids, labels):
        return nn.functional.cross_entropy(self.head(self.embed(input_ids)), labels)


class LossTrackingTrainer(MiniTrainer):
    """Reports the mean training loss since the last log, not just the last batch's."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.running_loss = torch.tensor(0.0)
        self.running_steps = 0

    def training_step(self, model, inputs):
        model.train()
        loss = model(**inputs) / self.gradient_accumulation_steps
        loss.backward()
        self.running_loss = self.running_loss.to(loss.device) + loss  # leak: LL101
        self.running_steps += 1
        return loss.detach()

    def log(self, logs):
        if self.running_steps:
            logs["running_loss"] = (self.running_loss / self.running_steps).item()
            self.running_loss, self.running_steps = torch.tensor(0.0), 0
        super().log(logs)


def main():
    torch.manual_seed(0)
    data = TensorDataset(torch.randint(0, 1000, (3200, 24)), torch.randint(0, 2, (3200,)))
    LossTrackingTrainer(Classifier(), data).train()


if __name__ == "__main__":
    main()
