"""Annealed importance sampling (AIS) estimate of a VAE's log-likelihood, with HMC transitions

Source: https://github.com/lxuechen/BDMC/pull/3
Source: https://github.com/lxuechen/BDMC/pull/4
Style: plain
Kind: tensors accumulated across iterations with their graph: the log importance weight `logw += log_f(t1) - log_f(t0)` adds two decoder evaluations per temperature (the decoder's parameters require grad), so logw chains the graphs of every step of a 500-step schedule until the batch is done and the GPU runs out of memory (maintainer's fix: run AIS under no_grad and enable grad only to take the HMC gradient)
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

LATENT = 50


class VAE(nn.Module):
    def __init__(self, x_dim=784, hidden=200):
        super().__init__()
        self.latent_dim = LATENT
        self.enc = nn.Sequential(nn.Linear(x_dim, hidden), nn.Softplus(), nn.Linear(hidden, 2 * LATENT))
        self.dec = nn.Sequential(nn.Linear(LATENT, hidden), nn.Softplus(), nn.Linear(hidden, hidden), nn.Softplus(),
                                 nn.Linear(hidden, x_dim))

    def decode(self, z):
        return self.dec(z)


def log_normal(z):
    return -0.5 * (z ** 2).sum(dim=1) - 0.5 * z.size(1) * np.log(2 * np.pi)


def log_bernoulli(logits, x):
    return -F.binary_cross_entropy_with_logits(logits, x, reduction="none").sum(dim=1)


def hmc_step(z, v, U, grad_U, eps, leapfrog=10):
    step = eps.view(-1, 1)
    z0, v0 = z, v
    v = v - 0.5 * step * grad_U(z)
    for i in range(leapfrog):
        z = z + step * v
        if i < leapfrog - 1:
            v = v - step * grad_U(z)
    v = -(v - 0.5 * step * grad_U(z))
    with torch.no_grad():
        h0 = U(z0) + 0.5 * (v0 ** 2).sum(1)
        h1 = U(z) + 0.5 * (v ** 2).sum(1)
        accept = (torch.rand_like(h0) < torch.exp(h0 - h1).clamp(max=1.0)).float().view(-1, 1)
        z_new = accept * z + (1 - accept) * z0
    return z_new.detach(), accept.view(-1)


def ais_trajectory(model, loader, schedule, n_sample=16, device="cuda"):
    def log_f(z, x, t):
        return log_normal(z) + t * log_bernoulli(model.decode(z), x)

    logws = []
    for x, _ in loader:
        x = x.to(device).repeat(n_sample, 1)
        batch = x.size(0)
        eps = torch.full((batch,), 0.01, device=device)
        accept_rate = torch.zeros(batch, device=device)
        logw = torch.zeros(batch, device=device)
        z = torch.randn(batch, LATENT, device=device).requires_grad_()
        for j, (t0, t1) in enumerate(zip(schedule[:-1], schedule[1:]), 1):
            logw += log_f(z, x, t1) - log_f(z, x, t0)  # leak: LL101

            def U(z_, t=t1):
                return -log_f(z_, x, t)

            def grad_U(z_):
                z_ = z_.detach().requires_grad_()
                grad = torch.autograd.grad(U(z_).sum(), z_)[0]
                return grad.clamp(-1e4, 1e4)

            z, accepted = hmc_step(z, torch.randn_like(z), U, grad_U, eps)
            accept_rate = accept_rate + (accepted - accept_rate) / j
            eps = torch.where(accept_rate > 0.65, eps * 1.02, eps * 0.98).clamp(1e-4, 0.5)
        logw = torch.logsumexp(logw.view(n_sample, -1), dim=0) - np.log(n_sample)
        logws.append(logw.detach().cpu())
        print(f"batch log-likelihood bound {logw.mean().item():.3f}")
    return logws


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = VAE().to(device).eval()
    images = (torch.rand(1000, 784) > 0.5).float()
    loader = DataLoader(TensorDataset(images, torch.zeros(1000)), batch_size=100)
    bounds = ais_trajectory(model, loader, np.linspace(0.0, 1.0, 500), device=device)
    print("AIS lower bound", torch.cat(bounds).mean().item())
