"""Lightning forecaster: a prediction-writer callback collects every batch's outputs, inputs and targets on the GPU

Source: https://github.com/sktime/pytorch-forecasting/pull/2086
Style: lightning
Kind: device memory grows without a graph: the callback's on_predict_batch_end appends each batch's raw output, the whole input dict and the target to lists on the callback while they are still GPU tensors, so a long prediction run (return_x / return_y, raw mode) keeps the whole dataset's batches on the GPU until CUDA OOM
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class TFTLikeForecaster(pl.LightningModule):
    def __init__(self, n_features=16, hidden=128, horizon=24, quantiles=(0.1, 0.5, 0.9)):
        super().__init__()
        self.save_hyperparameters()
        self.encoder = nn.LSTM(n_features, hidden, num_layers=2, batch_first=True)
        self.decoder = nn.Linear(hidden, horizon * len(quantiles))
        self.quantiles = torch.tensor(quantiles)

    def forward(self, x):
        h, _ = self.encoder(x["encoder_cont"])
        out = self.decoder(h[:, -1])
        return out.view(out.size(0), self.hparams.horizon, len(self.hparams.quantiles))

    def quantile_loss(self, pred, target):
        q = self.quantiles.to(pred.device)
        err = target.unsqueeze(-1) - pred
        return torch.maximum(q * err, (q - 1) * err).mean()

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.quantile_loss(self(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", self.quantile_loss(self(x), y), prog_bar=True)

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        x, _ = batch
        return self(x)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


class CollectPredictions(pl.Callback):
    def __init__(self, return_x=False, return_y=False):
        self.return_x, self.return_y = return_x, return_y
        self.predictions, self.info = [], {"x": [], "y": []}

    def on_predict_epoch_start(self, trainer, pl_module):
        self.predictions, self.info = [], {"x": [], "y": []}

    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        self.predictions.append(outputs)  # leak: LL202
        if self.return_x:
            self.info["x"].append(x)  # leak: LL202
        if self.return_y:
            self.info["y"].append(y)  # leak: LL202

    def result(self):
        preds = torch.cat(self.predictions)
        x = {k: torch.cat([b[k] for b in self.info["x"]]) for k in self.info["x"][0]} if self.info["x"] else None
        y = torch.cat(self.info["y"]) if self.info["y"] else None
        return preds, x, y


def predict_raw(model, dataloader, return_x=True, return_y=True):
    collector = CollectPredictions(return_x=return_x, return_y=return_y)
    trainer = pl.Trainer(accelerator="gpu", devices=1, callbacks=[collector], logger=False)
    trainer.predict(model, dataloaders=dataloader, return_predictions=False)
    return collector.result()


if __name__ == "__main__":
    from forecasting_data import build_windows

    train_ds, val_ds, test_ds = build_windows("electricity.parquet", encoder_length=168, horizon=24)
    model = TFTLikeForecaster()
    pl.Trainer(accelerator="gpu", devices=1, max_epochs=30).fit(
        model, DataLoader(train_ds, batch_size=128, shuffle=True), DataLoader(val_ds, batch_size=512))
    preds, x, y = predict_raw(model, DataLoader(test_ds, batch_size=512))
    torch.save({"preds": preds, "y": y}, "test_raw_predictions.pt")
