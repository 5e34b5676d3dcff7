"""Validation losses kept on self as detached tensors and cleared at every epoch end

Source: https://github.com/ray-project/ray/pull/34147
Style: lightning
Kind: negative: a list on self filled every validation step (detached, cleared each epoch)
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class LinearModule(pl.LightningModule):
    def __init__(self, input_dim=32, output_dim=4):
        super().__init__()
        self.linear = nn.Linear(input_dim, output_dim)
        self.val_losses = []

    def forward(self, x):
        return self.linear(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self(x), y)

    def validation_step(self, val_batch, batch_idx):
        x, y = val_batch
        loss = nn.functional.cross_entropy(self(x), y)
        self.val_losses.append(loss.detach())
        return {"val_loss": loss}

    def on_validation_epoch_end(self):
        avg_loss = torch.stack(self.val_losses).mean()
        self.log("val_loss", avg_loss)
        self.val_losses.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


if __name__ == "__main__":
    train = TensorDataset(torch.randn(10_000, 32), torch.randint(0, 4, (10_000,)))
    val = TensorDataset(torch.randn(2_000, 32), torch.randint(0, 4, (2_000,)))
    trainer = pl.Trainer(max_epochs=100)
    trainer.fit(LinearModule(), DataLoader(train, batch_size=64), DataLoader(val, batch_size=64))
