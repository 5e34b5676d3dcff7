"""One torchmetrics instance per stage, created once, updated every step, computed and reset at every epoch end

Source: https://github.com/Lightning-AI/torchmetrics/pull/2006
Style: lightning
Kind: negative: torchmetrics metrics with list states updated every step (reset after each epoch's compute; never re-created)
"""
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics.classification import MulticlassAUROC, MulticlassAveragePrecision


class Classifier(pl.LightningModule):
    def __init__(self, num_classes=20, lr=1e-3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, num_classes))
        self.train_ap = MulticlassAveragePrecision(num_classes=num_classes)
        self.val_ap = MulticlassAveragePrecision(num_classes=num_classes)
        self.val_auroc = MulticlassAUROC(num_classes=num_classes)
        self.lr = lr

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        loss = F.cross_entropy(logits, y)
        self.train_ap.update(logits.detach().softmax(-1), y)
        self.log("train_loss", loss)
        return loss

    def on_train_epoch_end(self):
        self.log("train_ap", self.train_ap.compute())
        self.train_ap.reset()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        probs = self.net(x).softmax(-1)
        self.val_ap.update(probs, y)
        self.val_auroc.update(probs, y)

    def on_validation_epoch_end(self):
        self.log("val_ap", self.val_ap.compute())
        self.log("val_auroc", self.val_auroc.compute())
        self.val_ap.reset()
        self.val_auroc.reset()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


if __name__ == "__main__":
    def split(n):
        return DataLoader(TensorDataset(torch.randn(n, 256), torch.randint(0, 20, (n,))), batch_size=256, shuffle=n > 50_000)

    pl.Trainer(max_epochs=100, accelerator="auto").fit(Classifier(), split(200_000), split(20_000))
