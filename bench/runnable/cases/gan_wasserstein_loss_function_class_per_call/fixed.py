"""A Wasserstein loss helper defines a new autograd Function class on every call, capturing its tensors

Source: https://github.com/PythonOT/POT/pull/254
Style: gan
Kind: a class (an autograd Function) created per call keeps tensors alive through reference cycles
Runnable from: bench/leaks/cases/gan_wasserstein_loss_function_class_per_call
"""
import numpy as np
import torch
import torch.nn as nn


def transport_plan(a, b, M):
    """Stands in for ot.emd: a plan with marginals a and b (exact when both are uniform: a matching)."""
    match = M.argsort(dim=1)[:, 0]
    plan = np.zeros(M.shape)
    plan[np.arange(len(a)), match.numpy()] = a.numpy()
    return plan


class _EMD2(torch.autograd.Function):
    """Defined once; everything backward needs goes through save_for_backward."""

    @staticmethod
    def forward(ctx, a, b, M):
        G = torch.from_numpy(transport_plan(a.double(), b.double(), M.double())).to(M)
        ctx.save_for_backward(a, b, G)
        return (G * M).sum()

    @staticmethod
    def backward(ctx, grad_output):
        a, b, G = ctx.saved_tensors
        return grad_output * (a - a.mean()), grad_output * (b - b.mean()), grad_output * G


def emd2_torch(a, b, M):
    """Exact OT cost between histograms a and b with ground cost M, differentiable w.r.t. all three."""
    return _EMD2.apply(a, b, M)


class Generator(nn.Module):
    def __init__(self, latent=2, out=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent, 64), nn.ReLU(), nn.Linear(64, out))

    def forward(self, z):
        return self.net(z)


def data_sampler(n):
    angle = np.random.rand(n) * 2 * np.pi
    return torch.tensor(np.stack([np.cos(angle), np.sin(angle)], 1) + 0.05 * np.random.randn(n, 2), dtype=torch.float32)


if __name__ == "__main__":
    torch.manual_seed(0)
    np.random.seed(0)
    G = Generator()
    optimizer = torch.optim.RMSprop(G.parameters(), lr=5e-4)
    n = 128
    for it in range(200):
        xd = data_sampler(n)
        xg = G(torch.randn(n, 2))
        M = ((xd[:, None, :] - xg[None, :, :]) ** 2).sum(-1)
        loss = emd2_torch(torch.full((n,), 1 / n), torch.full((n,), 1 / n), M)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if it % 100 == 0:
            print(it, loss.item())
