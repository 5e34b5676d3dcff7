"""Batch norm between the layers of a normalising flow keeps running stats with their graph

Source: https://github.com/bayesiains/nflows/pull/11
Source: https://github.com/bayesiains/nflows/issues/10
Style: plain
Kind: running statistics in a custom normalization module carry the graph from step to step
"""
import math

import torch
import torch.nn as nn


class BatchNormTransform(nn.Module):
    def __init__(self, features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        self.log_gamma = nn.Parameter(torch.zeros(features))
        self.beta = nn.Parameter(torch.zeros(features))
        self.register_buffer("running_mean", torch.zeros(features))
        self.register_buffer("running_var", torch.ones(features))

    def forward(self, inputs):
        if self.training:
            mean, var = inputs.mean(0), inputs.var(0)
            self.running_mean.mul_(1 - self.momentum).add_(mean.detach() * self.momentum)
            self.running_var.mul_(1 - self.momentum).add_(var.detach() * self.momentum)
        else:
            mean, var = self.running_mean, self.running_var
        outputs = torch.exp(self.log_gamma) * (inputs - mean) / torch.sqrt(var + self.eps) + self.beta
        logabsdet = (self.log_gamma - 0.5 * torch.log(var + self.eps)).sum()
        return outputs, logabsdet.expand(inputs.shape[0])


class AffineCoupling(nn.Module):
    def __init__(self, features, hidden=64, flip=False):
        super().__init__()
        self.flip = flip
        half = features // 2
        self.net = nn.Sequential(nn.Linear(half, hidden), nn.ReLU(), nn.Linear(hidden, 2 * (features - half)))

    def forward(self, x):
        a, b = x.chunk(2, dim=1)
        if self.flip:
            a, b = b, a
        shift, log_scale = self.net(a).chunk(2, dim=1)
        log_scale = torch.tanh(log_scale)
        b = b * torch.exp(log_scale) + shift
        out = torch.cat([b, a] if self.flip else [a, b], dim=1)
        return out, log_scale.sum(1)


class SimpleRealNVP(nn.Module):
    def __init__(self, features=2, layers=4):
        super().__init__()
        blocks = []
        for i in range(layers):
            blocks += [AffineCoupling(features, flip=i % 2 == 1), BatchNormTransform(features)]
        self.blocks = nn.ModuleList(blocks)

    def log_prob(self, x):
        total = torch.zeros(x.shape[0])
        for block in self.blocks:
            x, logdet = block(x)
            total = total + logdet
        base = -0.5 * (x ** 2).sum(1) - x.shape[1] * 0.5 * math.log(2 * math.pi)
        return base + total


def two_moons(n):
    t = torch.rand(n) * math.pi
    upper = torch.stack([torch.cos(t), torch.sin(t)], 1)
    lower = torch.stack([1 - torch.cos(t), 0.5 - torch.sin(t)], 1)
    pick = torch.rand(n) < 0.5
    return torch.where(pick[:, None], upper, lower) + 0.1 * torch.randn(n, 2)


if __name__ == "__main__":
    flow = SimpleRealNVP()
    optimizer = torch.optim.Adam(flow.parameters(), lr=1e-3)
    for i in range(5000):
        x = two_moons(1024)
        optimizer.zero_grad()
        loss = -flow.log_prob(x).mean()
        loss.backward()
        optimizer.step()
        if i % 500 == 0:
            print(i, loss.item())
