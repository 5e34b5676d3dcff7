"""wandb.log receives the loss tensor itself on every step

Source: https://github.com/wandb/wandb/issues/354
Style: plain
Kind: graph tensors handed to a logger
"""
import argparse

import torch
import torch.nn as nn
import wandb
from torch.utils.data import DataLoader, TensorDataset


class Regressor(nn.Module):
    def __init__(self, n_in=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--lr", type=float, default=3e-4)
    args = parser.parse_args()
    run = wandb.init(project="tabular-regression", config=vars(args))
    data = TensorDataset(torch.randn(20000, 64), torch.randn(20000))
    loader = DataLoader(data, batch_size=256, shuffle=True)
    model = Regressor()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    step = 0
    for epoch in range(args.epochs):
        for x, y in loader:
            pred = model(x)
            loss = nn.functional.smooth_l1_loss(pred, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            mae = (pred - y).abs().mean()
            wandb.log({"train/loss": loss, "train/mae": mae, "epoch": epoch}, step=step)  # leak: new:graph-to-logger
            step += 1
    run.finish()


if __name__ == "__main__":
    main()
