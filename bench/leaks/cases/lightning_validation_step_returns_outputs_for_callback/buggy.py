"""validation_step returns a dict of GPU tensors for a logging callback; Lightning stores every one

Source: https://github.com/Lightning-AI/pytorch-lightning/issues/8583
Source: https://github.com/Lightning-AI/pytorch-lightning/issues/8453
Style: lightning
Kind: device memory grows without a graph: validation outputs kept for the whole epoch
"""
import pytorch_lightning as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class ExternalMetricsLogger(pl.Callback):
    """Sends per-batch validation numbers to an experiment tracker."""

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
        trainer.logger.log_metrics({"val/batch_loss": outputs["loss"].item()}, step=trainer.global_step)

    def on_validation_epoch_end(self, trainer, pl_module):
        trainer.logger.log_metrics({"val/epoch": trainer.current_epoch}, step=trainer.global_step)


class BoringModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Sequential(nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 512))

    def forward(self, x):
        return self.layer(x)

    def training_step(self, batch, batch_idx):
        (x,) = batch
        return nn.functional.mse_loss(self(x), x)

    def validation_step(self, batch, batch_idx):
        (x,) = batch
        output = self(x)
        loss = nn.functional.mse_loss(output, x)
        return {"loss": loss, "output": output}  # leak: new:device-accumulation

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    train = DataLoader(TensorDataset(torch.randn(4096, 512)), batch_size=64)
    val = DataLoader(TensorDataset(torch.randn(200_000, 512)), batch_size=256)
    trainer = pl.Trainer(max_epochs=3, gpus=1, callbacks=[ExternalMetricsLogger()])
    trainer.fit(BoringModel(), train, val)
