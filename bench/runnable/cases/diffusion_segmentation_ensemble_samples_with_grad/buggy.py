"""A diffusion segmentation sampler keeps every ensemble member's DPM-Solver output with its graph

Source: https://github.com/ImprintLab/MedSegDiff/pull/158
Source: https://github.com/ImprintLab/MedSegDiff/issues/23
Style: diffusion
Kind: sampling records graphs nobody uses; the ensemble list keeps each sample's graph (about 2 GB per ensemble member) until the image is done
Runnable from: bench/leaks/cases/diffusion_segmentation_ensemble_samples_with_grad
Run: --step __main__:DPMSolverLite.sample
"""
import argparse
import os
import tempfile

import torch
import torch.nn as nn


class SegDiffUNet(nn.Module):
    """Denoises the mask channel conditioned on the image channels."""

    def __init__(self, in_ch=5, ch=16):
        super().__init__()
        self.t_embed = nn.Sequential(nn.Linear(1, ch), nn.SiLU())
        self.enc = nn.Sequential(nn.Conv2d(in_ch, ch, 3, padding=1), nn.SiLU(), nn.Conv2d(ch, ch, 3, padding=1), nn.SiLU())
        self.dec = nn.Conv2d(ch, 1, 3, padding=1)

    def forward(self, x, t):
        h = self.enc(x) + self.t_embed(t[:, None].float() / 1000)[:, :, None, None]
        return self.dec(h)


class DPMSolverLite:
    """First-order DPM-Solver in the x_t / eps parameterisation over a few timesteps."""

    def __init__(self, model, steps=5, T=1000):
        self.model, self.T = model, T
        betas = torch.linspace(1e-4, 0.02, T)
        self.alphas_bar = torch.cumprod(1 - betas, 0)
        self.timesteps = torch.linspace(T - 1, 0, steps).long()

    def sample(self, image, noise):
        x = noise
        for i, t in enumerate(self.timesteps[:-1]):
            s = self.timesteps[i + 1]
            a_t, a_s = self.alphas_bar[t].sqrt(), self.alphas_bar[s].sqrt()
            eps = self.model(torch.cat([image, x], 1), t.repeat(len(x)))  # leak: LL201
            x0 = (x - (1 - a_t ** 2).sqrt() * eps) / a_t
            x = a_s * x0 + (1 - a_s ** 2).sqrt() * eps
        return x


def staple(masks):
    return (torch.stack(masks).mean(0) > 0.5).float()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_ensemble", type=int, default=50)
    parser.add_argument("--images", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = SegDiffUNet().eval()
    solver = DPMSolverLite(model)
    out = tempfile.mkdtemp()
    for idx in range(args.images):
        image = torch.rand(1, 4, 32, 32)  # four MRI modalities
        enslist = []
        for _ in range(args.num_ensemble):
            sample = solver.sample(image, torch.randn(1, 1, 32, 32))
            enslist.append(torch.sigmoid(sample))  # leak: LL102
        mask = staple(enslist)
        torch.save(mask, os.path.join(out, f"mask_{idx:04d}.pt"))
        print(idx)


if __name__ == "__main__":
    main()
