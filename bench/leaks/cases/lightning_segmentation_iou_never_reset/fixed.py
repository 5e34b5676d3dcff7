"""A segmentation LightningModule updates a class-wise IoU metric and computes it without reset

Source: https://github.com/NRCan/geo-deep-learning/issues/582
Style: lightning
Kind: torchmetrics metric updated every step and never reset
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics.classification import MulticlassJaccardIndex


class SegmentationTask(pl.LightningModule):
    def __init__(self, num_classes=6, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Conv2d(4, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, num_classes, 1))
        self.iou_classwise_metric = MulticlassJaccardIndex(num_classes=num_classes, average=None)

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        images, masks = batch
        loss = F.cross_entropy(self(images), masks)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        images, masks = batch
        logits = self(images)
        self.log("val_loss", F.cross_entropy(logits, masks), sync_dist=True)
        self.iou_classwise_metric.update(logits.argmax(1), masks)

    def on_validation_epoch_end(self):
        per_class = self.iou_classwise_metric.compute()
        for idx, value in enumerate(per_class):
            self.log(f"val_iou_class_{idx}", value)
        self.log("val_miou", per_class.mean())
        self.iou_classwise_metric.reset()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)


def loader(n, shuffle):
    return DataLoader(TensorDataset(torch.randn(n, 4, 256, 256), torch.randint(0, 6, (n, 256, 256))), batch_size=8, shuffle=shuffle)


if __name__ == "__main__":
    trainer = pl.Trainer(max_epochs=100, accelerator="auto")
    trainer.fit(SegmentationTask(), loader(800, True), loader(200, False))
