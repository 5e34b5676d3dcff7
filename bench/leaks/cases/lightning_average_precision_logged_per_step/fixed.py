"""A multilabel AveragePrecision metric is called every step and computed without reset

Source: https://github.com/Lightning-AI/torchmetrics/issues/3294
Style: lightning
Kind: torchmetrics metric updated every step and never reset (its list state grows)
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics import Accuracy, AveragePrecision

N_LABELS = 16


class TaggingModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(300, 512), nn.ReLU(), nn.Linear(512, N_LABELS))
        self.train_acc = Accuracy(task="multilabel", num_labels=N_LABELS)
        self.train_ap = AveragePrecision(task="multilabel", num_labels=N_LABELS)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, y.float())
        probs = logits.sigmoid().detach()
        self.train_acc(probs, y)
        self.train_ap.update(probs, y)
        self.log("train/acc", self.train_acc, on_step=True)
        if batch_idx % 100 == 0:
            self.log("train/ap", self.train_ap.compute())
            self.train_ap.reset()
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    data = TensorDataset(torch.randn(500_000, 300), torch.randint(0, 2, (500_000, N_LABELS)))
    trainer = pl.Trainer(max_epochs=30, accelerator="auto")
    trainer.fit(TaggingModel(), DataLoader(data, batch_size=2056, shuffle=True))
