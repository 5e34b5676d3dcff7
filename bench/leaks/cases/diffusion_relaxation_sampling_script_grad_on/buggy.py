"""A sampling script for a structure-relaxation diffusion model runs the reverse process with gradients on

Source: https://github.com/khaledkah/MoreRed/pull/26
Style: diffusion
Kind: a sampling script records graphs nobody uses (every denoising step chained)
"""
import argparse

import torch
import torch.nn as nn


class EquivariantDenoiser(nn.Module):
    def __init__(self, hidden=256):
        super().__init__()
        self.atom_embed = nn.Embedding(100, hidden)
        self.net = nn.Sequential(nn.Linear(hidden + 3 + 1, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 3))

    def forward(self, numbers, positions, t):
        h = torch.cat([self.atom_embed(numbers), positions, t.expand(positions.shape[0], 1)], dim=-1)
        return self.net(h)


class DDPMSampler:
    def __init__(self, model, T=1000):
        self.model, self.T = model, T
        self.betas = torch.linspace(1e-7, 2e-3, T)
        self.alphas = 1 - self.betas
        self.alpha_bars = torch.cumprod(self.alphas, 0)

    def denoise_step(self, numbers, x, t):
        eps = self.model(numbers, x, torch.tensor([[t / self.T]]))
        mean = (x - self.betas[t] / torch.sqrt(1 - self.alpha_bars[t]) * eps) / torch.sqrt(self.alphas[t])
        return mean + (torch.sqrt(self.betas[t]) * torch.randn_like(x) if t > 0 else 0)

    def sample(self, numbers, x_t, t_start):
        trajectory = [x_t]
        for t in range(t_start, -1, -1):
            x_t = self.denoise_step(numbers, x_t, t)  # leak: LL201
            trajectory.append(x_t)
        return x_t, trajectory


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--molecules", type=int, default=1000)
    parser.add_argument("--t-start", type=int, default=999)
    args = parser.parse_args()
    model = EquivariantDenoiser()
    model.load_state_dict(torch.load("morered.pt"))
    model.eval()
    sampler = DDPMSampler(model)
    relaxed = []
    for _ in range(args.molecules):
        numbers = torch.randint(1, 10, (29,))
        x, _ = sampler.sample(numbers, torch.randn(29, 3), args.t_start)
        relaxed.append(x.cpu())
    torch.save(relaxed, "relaxed.pt")


if __name__ == "__main__":
    main()
