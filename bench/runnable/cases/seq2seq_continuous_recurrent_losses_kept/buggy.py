"""Training a continuous recurrent unit keeps each batch's loss tensors for the epoch summary

Source: https://github.com/boschresearch/Continuous-Recurrent-Units/pull/4
Style: seq2seq
Kind: graph kept across steps in per-epoch loss lists
Runnable from: bench/leaks/cases/seq2seq_continuous_recurrent_losses_kept
"""
import numpy as np
import torch
import torch.nn as nn


class CRUCell(nn.Module):
    """Kalman-style latent update on irregular time steps."""

    def __init__(self, obs_dim=10, lat_dim=32):
        super().__init__()
        self.enc = nn.Linear(obs_dim, lat_dim)
        self.trans = nn.Linear(lat_dim, lat_dim)
        self.dec = nn.Linear(lat_dim, obs_dim)

    def forward(self, obs, dt):
        prior = torch.zeros(obs.shape[0], self.trans.in_features)
        outputs = []
        for t in range(obs.shape[1]):
            prior = torch.tanh(self.trans(prior) * dt[:, t:t + 1]) + self.enc(obs[:, t])
            outputs.append(self.dec(prior))
        return torch.stack(outputs, 1)


def train_epoch(model, optimizer, batches):
    epoch_ll = []
    epoch_rmse = []
    for obs, dt, target in batches:
        pred = model(obs, dt)
        loss = ((pred - target) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_ll.append(-loss)  # leak: LL102
        epoch_rmse.append(torch.sqrt(loss))  # leak: LL102
    return torch.stack(epoch_ll).mean(), torch.stack(epoch_rmse).mean()


def make_batches(n=100, batch=16, seq=20):
    return [(torch.randn(batch, seq, 10), torch.rand(batch, seq), torch.randn(batch, seq, 10)) for _ in range(n)]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = CRUCell()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = make_batches()
    for epoch in range(1):
        ll, rmse = train_epoch(model, optimizer, batches)
        print(f"epoch {epoch}: ll {ll.item():.4f} rmse {rmse.item():.4f} ({np.float32(rmse.item())})")
