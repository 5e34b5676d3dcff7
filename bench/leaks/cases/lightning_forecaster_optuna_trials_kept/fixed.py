"""Tuning a Lightning forecaster with Optuna keeps every trial's model and trainer in the study callbacks

Source: https://github.com/sktime/pytorch-forecasting/issues/1161
Style: lightning
Kind: an Optuna objective creating a model per trial; every trial's model stays referenced
"""
import lightning.pytorch as pl
import optuna
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class FusionForecaster(pl.LightningModule):
    def __init__(self, hidden_size, attention_heads, dropout, lr):
        super().__init__()
        self.save_hyperparameters()
        self.proj = nn.Linear(16, hidden_size)
        self.attn = nn.MultiheadAttention(hidden_size, attention_heads, dropout=dropout, batch_first=True)
        self.head = nn.Linear(hidden_size, 24)

    def forward(self, x):
        h = self.proj(x)
        h, _ = self.attn(h, h, h)
        return self.head(h[:, -1])

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.l1_loss(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.l1_loss(self(x), y))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


class KeepTrials:
    def __init__(self):
        self.models = {}

    def __call__(self, study, trial):
        self.models[trial.number] = trial.user_attrs["checkpoint"]


def objective(trial, train_loader, val_loader):
    model = FusionForecaster(trial.suggest_int("hidden_size", 16, 265), trial.suggest_int("attention_heads", 1, 4),
                             trial.suggest_float("dropout", 0.1, 0.3), trial.suggest_float("lr", 1e-4, 1e-1, log=True))
    trainer = pl.Trainer(max_epochs=20, accelerator="gpu", enable_progress_bar=False)
    trainer.fit(model, train_loader, val_loader)
    path = f"trial_{trial.number}.pt"
    torch.save(model.state_dict(), path)
    trial.set_user_attr("checkpoint", path)
    return trainer.callback_metrics["val_loss"].item()


if __name__ == "__main__":
    data = TensorDataset(torch.randn(50_000, 168, 16), torch.randn(50_000, 24))
    train_loader, val_loader = DataLoader(data, batch_size=128, shuffle=True), DataLoader(data, batch_size=512)
    keep = KeepTrials()
    study = optuna.create_study(direction="minimize")
    study.optimize(lambda t: objective(t, train_loader, val_loader), n_trials=100, callbacks=[keep])
    print("best checkpoint:", keep.models[study.best_trial.number])
