"""Overriding training_epoch_end makes Lightning keep every training_step output, predictions included

Source: https://github.com/ashleve/lightning-hydra-template/issues/458
Style: lightning
Kind: device memory grows without a graph: per-step outputs kept for the whole epoch
"""
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class MNISTLitModule(pl.LightningModule):
    def __init__(self, lr=1e-3):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
        self.lr = lr

    def forward(self, x):
        return self.net(x)

    def step(self, batch):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        return loss, logits.argmax(dim=1), y

    def training_step(self, batch, batch_idx):
        loss, preds, targets = self.step(batch)
        self.log("train/loss", loss, on_step=False, on_epoch=True)
        return {"loss": loss, "preds": preds, "targets": targets}

    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.correct += (outputs["preds"] == outputs["targets"]).sum().item()
        self.seen += outputs["targets"].numel()

    def on_train_epoch_start(self):
        self.correct, self.seen = 0, 0

    def on_train_epoch_end(self):
        self.log("train/acc_epoch", self.correct / max(self.seen, 1))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


if __name__ == "__main__":
    data = TensorDataset(torch.randn(1_000_000, 1, 28, 28), torch.randint(0, 10, (1_000_000,)))
    trainer = pl.Trainer(max_epochs=10, gpus=1)
    trainer.fit(MNISTLitModule(), DataLoader(data, batch_size=128, num_workers=4))
