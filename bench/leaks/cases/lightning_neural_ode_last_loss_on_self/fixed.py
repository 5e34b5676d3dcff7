"""A neural-ODE LightningModule keeps the last training loss on self, so its graph lives into the next step

Source: https://github.com/Lightning-AI/pytorch-lightning/pull/9336
Style: lightning
Kind: a trainer keeping the last loss on self (graph alive through the next step)
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class ODEFunc(nn.Module):
    def __init__(self, dim=16, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, dim))

    def forward(self, t, y):
        return self.net(y)


def rk4_integrate(func, y0, t_end=1.0, steps=200):
    h = t_end / steps
    y, t = y0, 0.0
    for _ in range(steps):
        k1 = func(t, y)
        k2 = func(t + h / 2, y + h * k1 / 2)
        k3 = func(t + h / 2, y + h * k2 / 2)
        k4 = func(t + h, y + h * k3)
        y = y + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
        t += h
    return y


class NeuralODE(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.func = ODEFunc()
        self.last_loss = None

    def training_step(self, batch, batch_idx):
        y0, y1 = batch
        loss = nn.functional.mse_loss(rk4_integrate(self.func, y0), y1)
        self.last_loss = loss.detach()
        return loss

    def on_train_batch_end(self, outputs, batch, batch_idx):
        if batch_idx % 50 == 0:
            self.print(f"step {self.global_step}: {self.last_loss.item():.5f}")

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    y0 = torch.randn(20_000, 16)
    y1 = torch.roll(y0, 1, dims=1) * 0.9
    trainer = pl.Trainer(max_epochs=50, enable_progress_bar=False)
    trainer.fit(NeuralODE(), DataLoader(TensorDataset(y0, y1), batch_size=256, shuffle=True))
