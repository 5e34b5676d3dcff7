"""A LightningModule's validation_step calls the model with no explicit no_grad: Lightning disables grad there

Source: https://lightning.ai/docs/pytorch/stable/common/lightning_module.html
Style: lightning
Kind: negative: evaluation forward in validation_step/test_step (the Trainer runs them without grad)
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class LitClassifier(pl.LightningModule):
    def __init__(self, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 256), nn.ReLU(), nn.Linear(256, 10))

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val_loss", F.cross_entropy(logits, y), prog_bar=True)
        self.log("val_acc", (logits.argmax(1) == y).float().mean(), prog_bar=True)

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_acc", (self(x).argmax(1) == y).float().mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


if __name__ == "__main__":
    data = TensorDataset(torch.randn(60_000, 1, 28, 28), torch.randint(0, 10, (60_000,)))
    train, val = torch.utils.data.random_split(data, [55_000, 5_000])
    trainer = pl.Trainer(max_epochs=10)
    model = LitClassifier()
    trainer.fit(model, DataLoader(train, batch_size=64, shuffle=True), DataLoader(val, batch_size=256))
    trainer.test(model, DataLoader(val, batch_size=256))
