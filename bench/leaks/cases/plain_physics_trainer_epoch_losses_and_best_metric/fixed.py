"""A differentiable-physics trainer keeps every batch's training loss and the best epoch metric with their graphs

Source: https://github.com/pnnl/neuromancer/pull/292
Style: plain
Kind: graph-attached losses kept across steps: the per-epoch loss list holds every batch's graph until the epoch mean is taken, and the mean (a graph over the whole epoch) is kept on the trainer as the best metric so far
"""
import copy

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class ResidualDynamics(nn.Module):
    """x_{k+1} = x_k + f(x_k, u_k) rolled out over a horizon; returns a dict of metrics."""

    def __init__(self, nx=8, nu=2, hidden=128):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(nx + nu, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(),
                               nn.Linear(hidden, nx))

    def forward(self, batch):
        x = batch["x0"]
        preds = []
        for k in range(batch["u"].shape[1]):
            x = x + self.f(torch.cat([x, batch["u"][:, k]], dim=-1))
            preds.append(x)
        traj = torch.stack(preds, dim=1)
        loss = nn.functional.mse_loss(traj, batch["y"])
        smooth = (traj[:, 1:] - traj[:, :-1]).pow(2).mean()
        return {"train_loss": loss + 0.1 * smooth, "dev_loss": loss}


class RolloutTrainer:
    def __init__(self, model, train_loader, dev_loader, epochs=200, lr=1e-3, patience=20,
                 eval_metric="mean_train_loss"):
        self.model = model
        self.train_loader = train_loader
        self.dev_loader = dev_loader
        self.epochs = epochs
        self.patience = patience
        self.eval_metric = eval_metric
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        self.best_metric = float("inf")
        self.best_state = copy.deepcopy(model.state_dict())
        self.history = []

    @staticmethod
    def to_batch(x0, u, y):
        return {"x0": x0, "u": u, "y": y}

    def train(self):
        bad_epochs = 0
        for epoch in range(self.epochs):
            self.model.train()
            losses = []
            for x0, u, y in self.train_loader:
                output = self.model(self.to_batch(x0, u, y))
                self.optimizer.zero_grad()
                output["train_loss"].backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), 10.0)
                self.optimizer.step()
                losses.append(output["train_loss"].detach())
            output["mean_train_loss"] = torch.mean(torch.stack(losses))

            self.model.eval()
            with torch.no_grad():
                dev = [self.model(self.to_batch(*b))["dev_loss"] for b in self.dev_loader]
            output["mean_dev_loss"] = torch.mean(torch.stack(dev))

            if output[self.eval_metric] < self.best_metric:
                self.best_metric = output[self.eval_metric].detach()
                self.best_state = copy.deepcopy(self.model.state_dict())
                bad_epochs = 0
            else:
                bad_epochs += 1
            self.history.append({"epoch": epoch, "train": float(output["mean_train_loss"]),
                                 "dev": float(output["mean_dev_loss"])})
            if epoch % 10 == 0:
                print(f"epoch {epoch}: train {float(output['mean_train_loss']):.5f}")
            if bad_epochs > self.patience:
                print("early stopping")
                break
        self.model.load_state_dict(self.best_state)
        return self.model


def make_loader(n, horizon=50, nx=8, nu=2, shuffle=True):
    x0 = torch.randn(n, nx)
    u = torch.randn(n, horizon, nu)
    y = torch.cumsum(0.05 * torch.randn(n, horizon, nx), dim=1) + x0[:, None]
    return DataLoader(TensorDataset(x0, u, y), batch_size=64, shuffle=shuffle)


if __name__ == "__main__":
    trainer = RolloutTrainer(ResidualDynamics(), make_loader(20_000), make_loader(2_000, shuffle=False))
    trainer.train()
