"""A LightningModule logs its graph-attached loss with self.log, which stores a detached copy

Source: https://github.com/Lightning-Universe/lightning-bolts/issues/793
Style: lightning
Kind: negative: graph tensors handed to the framework's logger (self.log detaches them)
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class LogisticRegression(pl.LightningModule):
    def __init__(self, input_dim=4, num_classes=3, lr=1e-2, l2_strength=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.linear = nn.Linear(input_dim, num_classes)

    def forward(self, x):
        return self.linear(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y) + self.hparams.l2_strength * self.linear.weight.pow(2).sum()
        acc = (logits.argmax(-1) == y).float().mean()
        self.log("train_loss", loss, prog_bar=True)
        self.log("train_acc", acc)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log_dict({"val_loss": F.cross_entropy(logits, y), "val_acc": (logits.argmax(-1) == y).float().mean()})

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


if __name__ == "__main__":
    x, y = torch.randn(15_000, 4), torch.randint(0, 3, (15_000,))
    trainer = pl.Trainer(max_epochs=200)
    trainer.fit(LogisticRegression(), DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True), DataLoader(TensorDataset(x, y), batch_size=256))
