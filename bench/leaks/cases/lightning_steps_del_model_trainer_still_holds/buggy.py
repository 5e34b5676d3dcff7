"""Step-by-step project checks (overfit one batch, overfit, validate) on Lightning: each step deletes its model afterwards, but its Trainer still holds it

Source: https://github.com/SebChw/Actually-Robust-Training/pull/148
Style: lightning
Kind: a model meant to be freed (`del self.model` at the end of each step) that another object still references: the step keeps its `pl.Trainer`, whose strategy and loops reference the LightningModule (and its optimizer state), so every step run leaves a model on the GPU
"""
import gc

import pytorch_lightning as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, transforms


class LitClassifier(pl.LightningModule):
    def __init__(self, width=512, lr=1e-3):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(784, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10))
        self.lr = lr

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_acc", (self.net(x).argmax(1) == y).float().mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


class Step:
    name = "step"
    trainer_kwargs = {}

    def __init__(self, model_factory, datamodule):
        self.model_factory = model_factory
        self.datamodule = datamodule
        self.results = {}

    def run_trainer(self):
        raise NotImplementedError

    def __call__(self):
        self.model = self.model_factory()
        self.trainer = pl.Trainer(accelerator="gpu", devices=1, logger=False, enable_checkpointing=False, **self.trainer_kwargs)  # leak: new:lingering-reference
        self.run_trainer()
        self.results = {k: float(v) for k, v in self.trainer.callback_metrics.items()}
        del self.model
        gc.collect()
        torch.cuda.empty_cache()
        print(f"{self.name}: {self.results} allocated={torch.cuda.memory_allocated() / 2**20:.0f} MiB")
        return self.results


class OverfitOneBatch(Step):
    name = "overfit_one_batch"
    trainer_kwargs = {"overfit_batches": 1, "max_epochs": 50}

    def run_trainer(self):
        self.trainer.fit(self.model, train_dataloaders=self.datamodule["train"])


class Overfit(Step):
    name = "overfit"
    trainer_kwargs = {"max_epochs": 5}

    def run_trainer(self):
        self.trainer.fit(self.model, train_dataloaders=self.datamodule["train"])


class Validate(Step):
    name = "validate"

    def run_trainer(self):
        self.trainer.validate(self.model, dataloaders=self.datamodule["val"])


def main():
    tf = transforms.ToTensor()
    train = Subset(datasets.MNIST("data", train=True, download=True, transform=tf), range(20000))
    val = datasets.MNIST("data", train=False, download=True, transform=tf)
    dm = {"train": DataLoader(train, batch_size=128, shuffle=True), "val": DataLoader(val, batch_size=512)}
    steps = [OverfitOneBatch(LitClassifier, dm), Overfit(LitClassifier, dm), Validate(LitClassifier, dm)]
    for repeat in range(3):
        for step in steps:
            step()


if __name__ == "__main__":
    main()
