"""Lightning image-restoration module that logs torchmetrics objects, which Lightning computes and resets at epoch end

Source: https://lightning.ai/docs/torchmetrics/stable/pages/lightning.html
Style: lightning
Kind: negative: resembles a torchmetrics metric updated every step and never reset (metric-never-reset) and metric states fed with graph-attached outputs; the metric objects themselves are passed to `self.log(..., on_epoch=True)`, so Lightning calls compute() and reset() at the end of every epoch, and they are updated with `pred.detach()`, so no training graph reaches their states
"""
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchmetrics.image import PeakSignalNoiseRatio, StructuralSimilarityIndexMeasure


class Denoiser(nn.Module):
    def __init__(self, width=64, depth=8):
        super().__init__()
        layers = [nn.Conv2d(3, width, 3, padding=1), nn.ReLU(True)]
        for _ in range(depth - 2):
            layers += [nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(True)]
        layers.append(nn.Conv2d(width, 3, 3, padding=1))
        self.body = nn.Sequential(*layers)

    def forward(self, noisy):
        return noisy - self.body(noisy)


class RestorationModule(pl.LightningModule):
    def __init__(self, lr=1e-3):
        super().__init__()
        self.net = Denoiser()
        self.lr = lr
        self.train_psnr = PeakSignalNoiseRatio(data_range=1.0)
        self.val_psnr = PeakSignalNoiseRatio(data_range=1.0)
        self.val_ssim = StructuralSimilarityIndexMeasure(data_range=1.0)

    def training_step(self, batch, batch_idx):
        noisy, clean = batch
        pred = self.net(noisy)
        loss = F.mse_loss(pred, clean)
        self.train_psnr(pred.detach().clamp(0, 1), clean)
        self.log("train_loss", loss, prog_bar=True)
        self.log("train_psnr", self.train_psnr, on_step=False, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        noisy, clean = batch
        pred = self.net(noisy).clamp(0, 1)
        self.val_psnr(pred, clean)
        self.val_ssim(pred, clean)
        self.log("val_psnr", self.val_psnr, on_epoch=True, prog_bar=True)
        self.log("val_ssim", self.val_ssim, on_epoch=True)

    def configure_optimizers(self):
        opt = torch.optim.Adam(self.parameters(), lr=self.lr)
        return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100)}


def main(train_loader, val_loader, epochs=100):
    trainer = pl.Trainer(max_epochs=epochs, accelerator="gpu", devices=1, log_every_n_steps=25)
    trainer.fit(RestorationModule(), train_loader, val_loader)
