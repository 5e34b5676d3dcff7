"""A depth-estimation LightningModule keeps per-sample validation errors in a dict of lists and empties every list at the epoch's end

Source: https://lightning.ai/docs/pytorch/stable/common/lightning_module.html#on-validation-epoch-end
Style: lightning
Kind: negative: resembles device tensors kept for every validation step (device-accumulation); each list is emptied in on_validation_epoch_end, reached through the dict's items()
"""
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class DepthRegressor(pl.LightningModule):
    def __init__(self, channels=3, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(
            nn.Conv2d(channels, 32, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(32, 32, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(32, 1, 1),
        )
        self.errors = {"abs_rel": [], "rmse": [], "delta1": []}

    def forward(self, images):
        return F.softplus(self.net(images))

    def training_step(self, batch, batch_idx):
        images, depth = batch
        loss = F.l1_loss(self(images), depth)
        self.log("train/l1", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        images, depth = batch
        predicted = self(images)
        ratio = torch.maximum(predicted / depth, depth / predicted)
        self.errors["abs_rel"].append(((predicted - depth).abs() / depth).flatten(1).mean(1))
        self.errors["rmse"].append((predicted - depth).pow(2).flatten(1).mean(1).sqrt())
        self.errors["delta1"].append((ratio < 1.25).float().flatten(1).mean(1))

    def on_validation_epoch_end(self):
        for name, per_sample in self.errors.items():
            if per_sample:
                self.log(f"val/{name}", torch.cat(per_sample).mean())
            per_sample.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def make_loader(n, shuffle):
    images = torch.rand(n, 3, 64, 64)
    depth = torch.rand(n, 1, 64, 64) * 9 + 1
    return DataLoader(TensorDataset(images, depth), batch_size=16, shuffle=shuffle)


if __name__ == "__main__":
    model = DepthRegressor()
    trainer = pl.Trainer(max_epochs=20, accelerator="gpu", devices=1, check_val_every_n_epoch=1)
    trainer.fit(model, make_loader(2048, True), make_loader(512, False))
