"""A forecasting base model appends its un-detached log dicts and GPU predictions to per-epoch output lists

Source: https://github.com/sktime/pytorch-forecasting/pull/1924
Style: lightning
Kind: graph kept for the whole epoch in training_step_outputs; predictions kept on the GPU
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class BaseForecaster(pl.LightningModule):
    def __init__(self, context=168, horizon=24, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(context, hidden), nn.ReLU(), nn.Linear(hidden, horizon * 3))
        self.horizon = horizon
        self.training_step_outputs, self.validation_step_outputs = [], []

    def quantile_loss(self, pred, y, quantiles=(0.1, 0.5, 0.9)):
        losses = [torch.max((q - 1) * (y - pred[..., i]), q * (y - pred[..., i])) for i, q in enumerate(quantiles)]
        return torch.stack(losses).mean()

    def step(self, x, y):
        prediction = self.net(x).view(-1, self.horizon, 3)
        loss = self.quantile_loss(prediction, y)
        log = {"loss": loss, "n_samples": x.size(0), "prediction": prediction}
        return log

    def training_step(self, batch, batch_idx):
        log = self.step(*batch)
        self.training_step_outputs.append({"loss": log["loss"].detach(), "n_samples": log["n_samples"]})
        return log["loss"]

    def validation_step(self, batch, batch_idx):
        log = self.step(*batch)
        self.validation_step_outputs.append({"loss": log["loss"].detach(), "prediction": log["prediction"].detach().cpu()})
        return log

    def on_train_epoch_end(self):
        losses = torch.stack([out["loss"] for out in self.training_step_outputs])
        self.log("train_loss_epoch", losses.mean())
        self.training_step_outputs.clear()

    def on_validation_epoch_end(self):
        preds = torch.cat([out["prediction"] for out in self.validation_step_outputs])
        self.log("val_median_abs", preds[..., 1].abs().mean())
        self.validation_step_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    x, y = torch.randn(200_000, 168), torch.randn(200_000, 24)
    trainer = pl.Trainer(max_epochs=20, accelerator="auto")
    trainer.fit(BaseForecaster(), DataLoader(TensorDataset(x, y), batch_size=256, shuffle=True), DataLoader(TensorDataset(x, y), batch_size=1024))
