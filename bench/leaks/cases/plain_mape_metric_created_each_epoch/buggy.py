"""A regression script builds a new MAPE metric on the GPU every epoch and never resets the old ones

Source: https://github.com/Lightning-AI/torchmetrics/issues/1160
Style: plain
Kind: torchmetrics metric created per epoch, states never released
"""
import gc

import torch
import torch.nn as nn
import torchmetrics
from torch.utils.data import DataLoader, TensorDataset


class SpectrumRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(1, 32, 9, padding=4), nn.ReLU(), nn.AdaptiveAvgPool1d(64), nn.Flatten(), nn.Linear(32 * 64, 396))

    def forward(self, spec):
        return self.net(spec)


def main(epochs=100):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = SpectrumRegressor().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    data = TensorDataset(torch.randn(20_000, 1, 2048), torch.rand(20_000, 396) + 0.1)
    train_loader = DataLoader(data, batch_size=64, shuffle=True)
    valid_loader = DataLoader(data, batch_size=256)
    for epoch in range(epochs):
        torch.cuda.empty_cache()
        gc.collect()
        smooth_l1 = nn.SmoothL1Loss()
        mape = torchmetrics.MeanAbsolutePercentageError().to(device)  # leak: new:metric-never-reset
        model.train()
        for spec, lld in train_loader:
            spec, lld = spec.to(device), lld.to(device)
            optimizer.zero_grad()
            loss = smooth_l1(model(spec), lld)
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            for spec, lld in valid_loader:
                mape.update(model(spec.to(device)), lld.to(device))
        print(f"epoch {epoch}: MAPE {mape.compute().item():.4f}")


if __name__ == "__main__":
    main()
