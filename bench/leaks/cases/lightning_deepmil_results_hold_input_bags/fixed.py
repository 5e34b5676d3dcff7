"""DeepMIL's shared step returns a results dict that still holds the input bag of tiles

Source: https://github.com/microsoft/hi-ml/pull/293
Style: lightning
Kind: device memory grows without a graph: Lightning keeps every step's outputs for the epoch-end hook, and each output holds the whole input bag on the GPU
"""
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class TileBagDataset(Dataset):
    """One slide = one bag of tiles (fine-tuning feeds the raw tiles, not cached features)."""

    def __init__(self, slides=400, tiles=96, size=224):
        self.slides, self.tiles, self.size = slides, tiles, size

    def __len__(self):
        return self.slides

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.rand(self.tiles, 3, self.size, self.size, generator=g), torch.tensor(i % 2)


class DeepMILModule(pl.LightningModule):
    def __init__(self, dim=128, lr=1e-4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 32, 7, 4, 3), nn.ReLU(), nn.Conv2d(32, dim, 3, 2, 1),
                                     nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.attention = nn.Sequential(nn.Linear(dim, 64), nn.Tanh(), nn.Linear(64, 1))
        self.classifier = nn.Linear(dim, 1)
        self.lr = lr

    def forward(self, bag):
        feats = self.encoder(bag)
        weights = torch.softmax(self.attention(feats), dim=0)
        return self.classifier((weights * feats).sum(0)), weights

    def _shared_step(self, batch):
        bags, labels = batch
        logits, attentions = zip(*(self(bag) for bag in bags))
        logits = torch.cat(logits)
        loss = F.binary_cross_entropy_with_logits(logits, labels.float())
        results = {
            "loss": loss,
            "prob": torch.sigmoid(logits).detach(),
            "label": labels,
            "attention": [a.detach() for a in attentions],
        }
        return results

    def training_step(self, batch, batch_idx):
        results = self._shared_step(batch)
        self.log("train/loss", results["loss"])
        return results

    def validation_step(self, batch, batch_idx):
        return self._shared_step(batch)

    def validation_epoch_end(self, outputs):
        probs = torch.cat([o["prob"] for o in outputs])
        labels = torch.cat([o["label"] for o in outputs])
        self.log("val/accuracy", ((probs > 0.5).long() == labels).float().mean())

    def training_epoch_end(self, outputs):
        self.log("train/epoch_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


if __name__ == "__main__":
    loader = DataLoader(TileBagDataset(), batch_size=2, shuffle=True, num_workers=4)
    val_loader = DataLoader(TileBagDataset(slides=100), batch_size=2, num_workers=4)
    trainer = pl.Trainer(max_epochs=50, accelerator="gpu", devices=1)
    trainer.fit(DeepMILModule(), loader, val_loader)
