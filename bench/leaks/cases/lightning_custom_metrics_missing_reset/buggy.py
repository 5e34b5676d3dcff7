"""Custom list-state metrics of a training framework are computed each epoch but never reset

Source: https://github.com/luxonis/luxonis-train/pull/25
Style: lightning
Kind: torchmetrics metric updated every step and never reset
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics import Metric


class ObjectKeypointSimilarity(Metric):
    def __init__(self):
        super().__init__()
        self.add_state("pred_keypoints", default=[], dist_reduce_fx="cat")
        self.add_state("gt_keypoints", default=[], dist_reduce_fx="cat")

    def update(self, preds, target):
        self.pred_keypoints.append(preds.detach())
        self.gt_keypoints.append(target)

    def compute(self):
        preds = torch.cat(self.pred_keypoints)
        gts = torch.cat(self.gt_keypoints)
        d2 = ((preds - gts) ** 2).sum(-1)
        return torch.exp(-d2 / (2 * 0.05 ** 2)).mean()


class KeypointModel(pl.LightningModule):
    def __init__(self, n_keypoints=17):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten())
        self.head = nn.Linear(32 * 16, n_keypoints * 2)
        self.metrics = nn.ModuleDict({"val_oks": ObjectKeypointSimilarity(), "test_oks": ObjectKeypointSimilarity()})

    def forward(self, x):
        return self.head(self.backbone(x)).view(x.shape[0], -1, 2)

    def training_step(self, batch, batch_idx):
        images, keypoints = batch
        return nn.functional.l1_loss(self(images), keypoints)

    def validation_step(self, batch, batch_idx):
        images, keypoints = batch
        self.metrics["val_oks"].update(self(images), keypoints)

    def on_validation_epoch_end(self):
        for name, metric in self.metrics.items():
            if name.startswith("val"):
                self.log(name, metric.compute())  # leak: new:metric-never-reset

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=3e-4)


if __name__ == "__main__":
    data = TensorDataset(torch.rand(1000, 3, 128, 128), torch.rand(1000, 17, 2))
    trainer = pl.Trainer(max_epochs=300, check_val_every_n_epoch=1)
    trainer.fit(KeypointModel(), DataLoader(data, batch_size=16, shuffle=True), DataLoader(data, batch_size=64))
