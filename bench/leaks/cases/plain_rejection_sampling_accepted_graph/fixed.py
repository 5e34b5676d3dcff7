"""Rejection sampling from a trained density estimator collects accepted samples with their graph

Source: https://github.com/sbi-dev/sbi/issues/198
Style: plain
Kind: sampling loop keeps every draw's graph in a list (no detach, no no_grad)
"""
import torch
import torch.nn as nn


class MaskedAffineFlow(nn.Module):
    """A one-layer conditional affine flow: theta = mu(x) + sigma(x) * eps."""

    def __init__(self, theta_dim=3, x_dim=5, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(x_dim, hidden), nn.ReLU(), nn.Linear(hidden, 2 * theta_dim))

    def sample(self, n, context):
        mu, log_sigma = self.net(context).chunk(2, dim=-1)
        eps = torch.randn(n, mu.shape[-1])
        return mu + log_sigma.exp() * eps

    def log_prob(self, theta, context):
        mu, log_sigma = self.net(context).chunk(2, dim=-1)
        z = (theta - mu) / log_sigma.exp()
        return (-0.5 * z ** 2 - log_sigma).sum(-1)


def within_prior(theta, low=-2.0, high=2.0):
    return ((theta > low) & (theta < high)).all(dim=-1)


def rejection_sample(flow, x_obs, num_samples, batch=10_000):
    accepted, count = [], 0
    while count < num_samples:
        with torch.no_grad():
            candidates = flow.sample(batch, context=x_obs)
        keep = within_prior(candidates)
        accepted.append(candidates[keep])
        count += int(keep.sum())
        acceptance = keep.float().mean().item()
        if acceptance < 1e-4:
            raise RuntimeError("posterior leaks out of the prior support")
    return torch.cat(accepted)[:num_samples]


def train_flow(flow, steps=2000):
    optimizer = torch.optim.Adam(flow.parameters(), lr=1e-3)
    for _ in range(steps):
        theta = torch.empty(256, 3).uniform_(-2, 2)
        x = torch.cat([theta, theta[:, :2] ** 2], dim=1) + 0.1 * torch.randn(256, 5)
        loss = -flow.log_prob(theta, x).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    flow = MaskedAffineFlow()
    train_flow(flow)
    x_obs = torch.tensor([0.5, -0.3, 1.2, 0.25, 0.09])
    posterior = rejection_sample(flow, x_obs, num_samples=1_000_000)
    print(posterior.mean(0), posterior.std(0))
