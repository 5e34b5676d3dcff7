"""training_step returns the large input x next to the loss while training_epoch_end is overridden

Source: https://github.com/Lightning-AI/pytorch-lightning/issues/15514
Style: lightning
Kind: device memory grows without a graph: the loop keeps every returned dict for training_epoch_end, including a 1.8 GB input per epoch
"""
import pytorch_lightning as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class SpectraDataset(Dataset):
    def __init__(self, n=10240, length=24000):
        self.n, self.length = n, length

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.rand(self.length, generator=g)
        return x, (x[:100].sum() > 50).float()


class SpectrumClassifier(pl.LightningModule):
    def __init__(self, length=24000, hidden=512):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(length, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.loss_fn = nn.BCEWithLogitsLoss()

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x).squeeze(-1)
        loss = self.loss_fn(logits, y)
        self.log("train_loss", loss)
        return {"loss": loss}

    def training_epoch_end(self, outputs):
        losses = torch.stack([o["loss"] for o in outputs])
        self.log("epoch_loss", losses.mean())
        print(f"epoch {self.current_epoch}: {len(outputs)} steps, mean loss {losses.mean().item():.4f}")

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    loader = DataLoader(SpectraDataset(), batch_size=32, shuffle=True, num_workers=4)
    trainer = pl.Trainer(max_epochs=20, accelerator="gpu", devices=1)
    trainer.fit(SpectrumClassifier(), loader)
