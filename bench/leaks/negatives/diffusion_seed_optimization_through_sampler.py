"""Seed optimisation backpropagates through a short denoising chain on purpose, with checkpointing

Source: https://github.com/dvirsamuel/SeedSelect/issues/3
Style: diffusion
Kind: negative: the sampler's x chained through the model output with gradients (the graph is the point)
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(4, 128, 3, padding=1), nn.SiLU(), nn.Conv2d(128, 4, 3, padding=1))

    def forward(self, x, t):
        return self.net(x) * (1 + t)


def sample_euler(model, noise, steps=10):
    x = noise
    sigmas = torch.linspace(1.0, 0.0, steps + 1)
    for i in range(steps):
        t = sigmas[i]
        denoised = checkpoint(model, x, t, use_reentrant=False)
        x = x + (sigmas[i + 1] - sigmas[i]) * (x - denoised) / max(float(t), 1e-3)
    return x


def optimize_seed(model, target_feats, feature_fn, iters=100):
    seed = torch.randn(1, 4, 64, 64, requires_grad=True)
    optimizer = torch.optim.Adam([seed], lr=0.05)
    for it in range(iters):
        image = sample_euler(model, seed)
        loss = (feature_fn(image) - target_feats).pow(2).mean() + 1e-3 * seed.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return seed.detach()


if __name__ == "__main__":
    model = Denoiser().eval()
    for p in model.parameters():
        p.requires_grad_(False)
    feature_fn = nn.Sequential(nn.AdaptiveAvgPool2d(8), nn.Flatten())
    target = torch.randn(1, 4 * 64)
    for concept in range(20):
        seed = optimize_seed(model, target, feature_fn)
        torch.save(seed, f"seed_{concept}.pt")
