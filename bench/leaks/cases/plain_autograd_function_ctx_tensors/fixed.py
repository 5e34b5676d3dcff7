"""A custom sampling Function keeps its intermediate tensors as ctx attributes

Source: https://github.com/pyro-ppl/pyro/pull/1049
Style: plain
Kind: outputs stored on an autograd ctx instead of save_for_backward
"""
import torch
import torch.nn as nn
from torch.autograd import Function


class _OMTSample(Function):
    """Reparameterised Gaussian sample with a hand-written backward for the Cholesky factor."""

    @staticmethod
    def forward(ctx, loc, scale_tril, num_samples):
        white = loc.new_empty((num_samples,) + loc.shape).normal_()
        z = torch.matmul(white, scale_tril.t())
        ctx.save_for_backward(scale_tril, white)
        return loc + z

    @staticmethod
    def backward(ctx, grad_output):
        scale_tril, white = ctx.saved_tensors
        grad_loc = grad_output.sum(0)
        grad_scale = torch.matmul(grad_output.reshape(-1, grad_output.shape[-1]).t(), white.reshape(-1, white.shape[-1]))
        return grad_loc, torch.tril(grad_scale), None


class GaussianPosterior(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(dim))
        self.raw_scale = nn.Parameter(torch.eye(dim) * 0.5)

    def rsample(self, n):
        scale_tril = torch.tril(self.raw_scale)
        return _OMTSample.apply(self.loc, scale_tril, n)


def log_joint(theta, data):
    prior = -0.5 * (theta ** 2).sum(-1)
    lik = -0.5 * ((data[None, :, :] - theta[:, None, :]) ** 2).sum((-1, -2))
    return prior + lik


def fit(steps=3000, dim=8, particles=16):
    data = torch.randn(100, dim) + 2.0
    guide = GaussianPosterior(dim)
    optimizer = torch.optim.Adam(guide.parameters(), lr=0.01)
    for step in range(steps):
        theta = guide.rsample(particles)
        scale = torch.tril(guide.raw_scale)
        entropy = torch.log(torch.diagonal(scale).abs() + 1e-6).sum()
        elbo = log_joint(theta, data).mean() + entropy
        optimizer.zero_grad()
        (-elbo).backward()
        optimizer.step()
        if step % 300 == 0:
            print(step, elbo.item())
    return guide


if __name__ == "__main__":
    fit()
