"""Project-template LightningModule (segmentation variant): training_step returns predictions and targets next to the loss

Source: https://github.com/HelmholtzAI-Consultants-Munich/Quicksetup-ai/pull/26
Style: lightning
Kind: device memory grows without a graph: the module defines training_epoch_end, so Lightning (< 2.0) keeps every training_step return value until the epoch ends; each holds the batch's predicted and target masks on the GPU that nothing ever reads, and GPU memory climbs through the epoch with large images (fixed by returning only the loss)
"""
from typing import Any, List

import pytorch_lightning as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics import JaccardIndex, MaxMetric


class TinyUNet(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1), nn.ReLU())
        self.enc2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.head = nn.Conv2d(64, n_classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        return self.head(torch.cat([self.up(self.enc2(e1)), e1], dim=1))


class SegmentationTaskModule(pl.LightningModule):
    def __init__(self, net: nn.Module, n_classes: int = 5, lr: float = 1e-3, weight_decay: float = 5e-4):
        super().__init__()
        self.save_hyperparameters(ignore=["net"])
        self.net = net
        self.criterion = nn.CrossEntropyLoss()
        self.train_iou = JaccardIndex(task="multiclass", num_classes=n_classes)
        self.val_iou = JaccardIndex(task="multiclass", num_classes=n_classes)
        self.val_iou_best = MaxMetric()

    def forward(self, x: torch.Tensor):
        return self.net(x)

    def step(self, batch: Any):
        x, y = batch
        logits = self.forward(x)
        loss = self.criterion(logits, y)
        preds = torch.argmax(logits, dim=1)
        return loss, preds, y

    def training_step(self, batch: Any, batch_idx: int):
        loss, preds, targets = self.step(batch)
        iou = self.train_iou(preds, targets)
        self.log("train/loss", loss, on_step=False, on_epoch=True, prog_bar=False)
        self.log("train/iou", iou, on_step=False, on_epoch=True, prog_bar=True)
        # what is returned here can be read in a callback or in training_epoch_end()
        return loss

    def training_epoch_end(self, outputs: List[Any]):
        # `outputs` is the list of dicts returned by every training_step of the epoch
        pass

    def validation_step(self, batch: Any, batch_idx: int):
        loss, preds, targets = self.step(batch)
        self.val_iou.update(preds, targets)
        self.log("val/loss", loss, on_step=False, on_epoch=True, prog_bar=False)

    def on_validation_epoch_end(self):
        iou = self.val_iou.compute()
        self.val_iou_best.update(iou)
        self.log("val/iou", iou, prog_bar=True)
        self.log("val/iou_best", self.val_iou_best.compute(), prog_bar=True)
        self.val_iou.reset()

    def on_train_epoch_end(self):
        self.train_iou.reset()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr, weight_decay=self.hparams.weight_decay)


def make_loader(n, size=512, n_classes=5, shuffle=False):
    images = torch.randn(n, 3, size, size)
    masks = torch.randint(0, n_classes, (n, size, size))
    return DataLoader(TensorDataset(images, masks), batch_size=8, shuffle=shuffle, num_workers=2)


if __name__ == "__main__":
    model = SegmentationTaskModule(TinyUNet(n_classes=5))
    trainer = pl.Trainer(max_epochs=30, accelerator="gpu", devices=1, log_every_n_steps=20)
    trainer.fit(model, make_loader(2000, shuffle=True), make_loader(200))
