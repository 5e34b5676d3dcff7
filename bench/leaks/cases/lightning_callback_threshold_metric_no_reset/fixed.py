"""A post-processing callback computes its threshold metric every validation epoch and never resets it

Source: https://github.com/Lightning-AI/torchmetrics/issues/2921
Style: lightning
Kind: torchmetrics metric updated every step and never reset (manual logging in a callback)
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics.classification import BinaryPrecisionRecallCurve


class F1AdaptiveThreshold(BinaryPrecisionRecallCurve):
    def compute(self):
        precision, recall, thresholds = super().compute()
        f1 = 2 * precision * recall / (precision + recall + 1e-10)
        return thresholds[torch.argmax(f1[:-1])]


class OneClassPostProcessor(pl.Callback):
    def __init__(self):
        self._image_threshold_metric = F1AdaptiveThreshold()
        self.image_threshold = 0.5

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        self._image_threshold_metric.to(pl_module.device)
        self._image_threshold_metric.update(outputs["pred_scores"], outputs["label"].int())

    def on_validation_epoch_end(self, trainer, pl_module):
        if self._image_threshold_metric.update_called:
            self.image_threshold = self._image_threshold_metric.compute().item()
        self._image_threshold_metric.reset()
        pl_module.log("image_threshold", self.image_threshold)


class AnomalyModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(3 * 64 * 64, 128), nn.ReLU(), nn.Linear(128, 32))
        self.decoder = nn.Linear(32, 3 * 64 * 64)

    def training_step(self, batch, batch_idx):
        images, _ = batch
        recon = self.decoder(self.encoder(images))
        return nn.functional.mse_loss(recon, images.flatten(1))

    def validation_step(self, batch, batch_idx):
        images, labels = batch
        recon = self.decoder(self.encoder(images))
        scores = ((recon - images.flatten(1)) ** 2).mean(1)
        return {"pred_scores": scores, "label": labels}

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    train = DataLoader(TensorDataset(torch.rand(2000, 3, 64, 64), torch.zeros(2000)), batch_size=32, shuffle=True)
    val = DataLoader(TensorDataset(torch.rand(500, 3, 64, 64), torch.randint(0, 2, (500,))), batch_size=32)
    trainer = pl.Trainer(max_epochs=200, callbacks=[OneClassPostProcessor()])
    trainer.fit(AnomalyModel(), train, val)
