"""A detection LightningModule sums per-component losses into a defaultdict of device tensors

Source: https://github.com/MultimediaTechLab/YOLO/pull/83
Style: lightning
Kind: dict of loss tensors accumulated across steps with the graph (kept on self)
Runnable from: bench/leaks/cases/lightning_detection_total_loss_defaultdict
"""
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class TinyYolo(nn.Module):
    def __init__(self, classes=8):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.SiLU(), nn.Conv2d(16, 32, 3, 2, 1), nn.SiLU())
        self.head = nn.Conv2d(32, 4 + 1 + classes, 1)

    def forward(self, x):
        return self.head(self.backbone(x))


class YoloLoss(nn.Module):
    def forward(self, preds, targets):
        box, obj, cls = preds[:, :4], preds[:, 4], preds[:, 5:]
        return {
            "BoxLoss": F.smooth_l1_loss(box, targets[:, :4]),
            "DFLoss": F.binary_cross_entropy_with_logits(obj, targets[:, 4]),
            "BCELoss": F.binary_cross_entropy_with_logits(cls, targets[:, 5:]),
        }


class TrainModel(nn.Module):
    """The LightningModule's core: training_step is called by the loop in fit() below."""

    def __init__(self):
        super().__init__()
        self.model = TinyYolo()
        self.loss_fn = YoloLoss()
        self.total_loss = defaultdict(float)

    def training_step(self, batch, batch_idx):
        images, targets = batch
        losses = self.loss_fn(self.model(images), targets)
        batch_size = images.shape[0]
        for loss_name, loss_val in losses.items():
            self.total_loss[loss_name] += loss_val.item() * batch_size
        return sum(losses.values())

    def on_train_epoch_end(self, dataset_size):
        for name, value in self.total_loss.items():
            print(f"train/{name}", float(value) / dataset_size)
        self.total_loss.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01, momentum=0.937)


def fit(module, loader, max_epochs):
    optimizer = module.configure_optimizers()
    for epoch in range(max_epochs):
        for batch_idx, batch in enumerate(loader):
            loss = module.training_step(batch, batch_idx)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        module.on_train_epoch_end(len(loader.dataset))


if __name__ == "__main__":
    torch.manual_seed(0)
    images = torch.rand(400, 3, 32, 32)
    targets = torch.rand(400, 13, 8, 8)
    fit(TrainModel(), DataLoader(TensorDataset(images, targets), batch_size=4, shuffle=True), max_epochs=1)
