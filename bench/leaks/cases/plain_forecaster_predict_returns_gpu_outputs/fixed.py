"""A forecaster's predict() concatenates every batch's raw outputs on the GPU and hands them to a caller that converts them to numpy

Source: https://github.com/sktime/pytorch-forecasting/issues/322
Style: plain
Kind: device memory grows without a graph: a large validation set's raw outputs and inputs kept on the GPU until predict() returns
"""
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class QuantileForecaster(nn.Module):
    def __init__(self, n_features=32, hidden=128, horizon=24, quantiles=(0.1, 0.5, 0.9)):
        super().__init__()
        self.encoder = nn.LSTM(n_features, hidden, batch_first=True)
        self.head = nn.Linear(hidden, horizon * len(quantiles))
        self.horizon, self.n_quantiles = horizon, len(quantiles)

    def forward(self, x):
        h, _ = self.encoder(x)
        return {"prediction": self.head(h[:, -1]).view(-1, self.horizon, self.n_quantiles)}

    @torch.no_grad()
    def predict(self, loader, return_x=False):
        self.eval()
        device = next(self.parameters()).device
        outputs, inputs = [], []
        for x, _ in loader:
            x = x.to(device)
            out = self(x)
            outputs.append(out["prediction"].cpu())
            if return_x:
                inputs.append(x.cpu())
        if return_x:
            return torch.cat(outputs), torch.cat(inputs)
        return torch.cat(outputs)


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    series = torch.randn(400_000, 168, 32)
    val_loader = DataLoader(TensorDataset(series, torch.zeros(len(series))), batch_size=512)
    model = QuantileForecaster().to(device)
    raw, x = model.predict(val_loader, return_x=True)
    median = raw[..., 1].numpy()
    frame = pd.DataFrame({"first_step_median": median[:, 0], "last_observed": x[:, -1, 0].numpy()})
    frame.to_csv("forecasts.csv", index=False)
    print("mean absolute change", float(np.abs(frame["first_step_median"] - frame["last_observed"]).mean()))


if __name__ == "__main__":
    main()
