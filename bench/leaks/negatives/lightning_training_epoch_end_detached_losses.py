"""A metric-learning LightningModule overrides training_epoch_end; the stored outputs are detached scalar losses only

Source: https://github.com/OML-Team/open-metric-learning/issues/118
Style: lightning
Kind: negative: per-step outputs kept by Lightning for the epoch-end hook (only the loss, which Lightning detaches; a few bytes per step)
"""
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def triplet_loss(emb, labels, margin=0.2):
    dist = torch.cdist(emb, emb)
    same = labels[:, None] == labels[None, :]
    hardest_pos = (dist * same).max(1)[0]
    hardest_neg = (dist + same * 1e6).min(1)[0]
    return F.relu(hardest_pos - hardest_neg + margin).mean()


class ExtractorModule(pl.LightningModule):
    def __init__(self, dim=128, lr=1e-4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.Conv2d(32, 64, 3, 2, 1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, dim))
        self.lr = lr

    def training_step(self, batch, batch_idx):
        images, labels = batch
        emb = F.normalize(self.backbone(images), dim=1)
        loss = triplet_loss(emb, labels)
        self.log("loss", loss, prog_bar=True)
        return {"loss": loss}

    def training_epoch_end(self, outputs):
        epoch_loss = torch.stack([o["loss"] for o in outputs]).mean()
        self.log("epoch_loss", epoch_loss)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


if __name__ == "__main__":
    images = torch.rand(20_000, 3, 64, 64)
    labels = torch.randint(0, 500, (20_000,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=128, shuffle=True)
    pl.Trainer(max_epochs=30, accelerator="auto").fit(ExtractorModule(), loader)
