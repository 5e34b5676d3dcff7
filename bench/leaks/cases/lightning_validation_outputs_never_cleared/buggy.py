"""validation_step outputs collected on self for on_validation_epoch_end are never cleared

Source: https://github.com/ray-project/ray/pull/38039
Style: lightning
Kind: device memory grows without a graph: a list on self filled every validation step, never cleared
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class LinearModule(pl.LightningModule):
    def __init__(self, input_dim=32, output_dim=4, lr=1e-2):
        super().__init__()
        self.linear = nn.Linear(input_dim, output_dim)
        self.lr = lr
        self.validation_step_outputs = []

    def forward(self, x):
        return self.linear(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, val_batch, batch_idx):
        x, y = val_batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(1) == y).float().mean()
        self.validation_step_outputs.append({"val_loss": loss, "val_accuracy": acc})  # leak: new:device-accumulation
        return loss

    def on_validation_epoch_end(self):
        avg_loss = torch.stack([x["val_loss"] for x in self.validation_step_outputs]).mean()
        avg_acc = torch.stack([x["val_accuracy"] for x in self.validation_step_outputs]).mean()
        self.log("val_loss", avg_loss)
        self.log("val_accuracy", avg_acc)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


if __name__ == "__main__":
    train = TensorDataset(torch.randn(10_000, 32), torch.randint(0, 4, (10_000,)))
    val = TensorDataset(torch.randn(50_000, 32), torch.randint(0, 4, (50_000,)))
    trainer = pl.Trainer(max_epochs=500, accelerator="auto", val_check_interval=0.25)
    trainer.fit(LinearModule(), DataLoader(train, batch_size=64), DataLoader(val, batch_size=64))
