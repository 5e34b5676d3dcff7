"""Lightning segmentation module returns images and predicted masks from validation_step for epoch-end logging

Source: https://github.com/Shreeyak/pytorch-lightning-segmentation-template/issues/43
Style: lightning
Kind: device memory kept for a whole evaluation: every `validation_step` returns the input images, labels and predicted masks (GPU tensors); Lightning keeps every returned dict until `validation_epoch_end`, only to log four samples, so GPU memory grows over the validation run
"""
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class SmallUNet(nn.Module):
    def __init__(self, n_classes, width=32):
        super().__init__()
        self.enc1 = self._block(3, width)
        self.enc2 = self._block(width, width * 2)
        self.enc3 = self._block(width * 2, width * 4)
        self.up2 = nn.ConvTranspose2d(width * 4, width * 2, 2, stride=2)
        self.dec2 = self._block(width * 4, width * 2)
        self.up1 = nn.ConvTranspose2d(width * 2, width, 2, stride=2)
        self.dec1 = self._block(width * 2, width)
        self.out = nn.Conv2d(width, n_classes, 1)

    @staticmethod
    def _block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(True),
                             nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(True))

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        e3 = self.enc3(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(e3), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.out(d1)


class SegmentationModule(pl.LightningModule):
    def __init__(self, n_classes=21, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.net = SmallUNet(n_classes)

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        images, masks = batch
        loss = F.cross_entropy(self(images), masks, ignore_index=255)
        self.log("train/loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        images, masks = batch
        logits = self(images)
        loss = F.cross_entropy(logits, masks, ignore_index=255)
        preds = logits.argmax(1)
        iou_hits = ((preds == masks) & (masks != 255)).sum()
        if batch_idx == 0:
            self.val_samples = (images[:4].detach().cpu(), masks[:4].detach().cpu(), preds[:4].detach().cpu())
        return {"val_loss": loss, "hits": iou_hits}

    def validation_epoch_end(self, outputs):
        avg_loss = torch.stack([o["val_loss"] for o in outputs]).mean()
        self.log("val/loss", avg_loss, prog_bar=True)
        self.log("val/pixel_hits", torch.stack([o["hits"] for o in outputs]).sum().float())
        self._log_samples(*self.val_samples)

    def _log_samples(self, images, masks, preds):
        n_classes = self.hparams.n_classes
        grid = torchvision.utils.make_grid(
            torch.cat([images.cpu(),
                       (masks.clamp(max=n_classes - 1).float() / n_classes).unsqueeze(1).repeat(1, 3, 1, 1).cpu(),
                       (preds.float() / n_classes).unsqueeze(1).repeat(1, 3, 1, 1).cpu()]),
            nrow=4, normalize=True)
        self.logger.experiment.add_image("val/samples", grid, self.current_epoch)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)


def main(datamodule, epochs=60):
    trainer = pl.Trainer(gpus=1, max_epochs=epochs, precision=16)
    trainer.fit(SegmentationModule(), datamodule=datamodule)
