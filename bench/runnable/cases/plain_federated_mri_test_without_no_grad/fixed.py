"""Federated MRI reconstruction: the test script runs the server model without torch.no_grad()

Source: https://github.com/guopengf/FL-MRCM/issues/2
Style: plain
Kind: evaluation forward records a graph nobody uses; every reconstruction kept for saving holds it until the end
Runnable from: bench/leaks/cases/plain_federated_mri_test_without_no_grad
Run: --step __main__:UNet.forward
"""
import argparse
import os
import tempfile
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class SliceDataset(Dataset):
    """Undersampled k-space slices (as zero-filled images) with their fully sampled targets."""

    def __init__(self, volumes=10, slices=20, size=32, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.items = [(f"vol{v:03d}", s, torch.rand(1, size, size, generator=g), torch.rand(1, size, size, generator=g))
                      for v in range(volumes) for s in range(slices)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class UNet(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.down1 = nn.Sequential(nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(), nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU())
        self.down2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(ch, 2 * ch, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(2 * ch, ch, 2, stride=2)
        self.out = nn.Sequential(nn.Conv2d(2 * ch, ch, 3, padding=1), nn.ReLU(), nn.Conv2d(ch, 1, 1))

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(d1)
        return x + self.out(torch.cat([d1, self.up(d2)], dim=1))


def psnr(pred, target):
    mse = torch.mean((pred - target) ** 2)
    return 10 * torch.log10(1.0 / mse)


def test(args, model, loader):
    model.eval()
    outputs = defaultdict(list)
    scores = []
    for fnames, slices, inputs, targets in loader:
        with torch.no_grad():
            recons = model(inputs)
        for i, fname in enumerate(fnames):
            outputs[fname].append((int(slices[i]), recons[i].cpu()))
            scores.append(psnr(recons[i], targets[i]).item())
    reconstructions = {
        fname: torch.stack([img for _, img in sorted(pairs, key=lambda p: p[0])]).squeeze(1).detach().numpy()
        for fname, pairs in outputs.items()
    }
    return reconstructions, float(np.mean(scores))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", default=None)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = UNet()
    if args.checkpoint:
        model.load_state_dict(torch.load(args.checkpoint)["model"])
    loader = DataLoader(SliceDataset(), batch_size=2)
    recons, mean_psnr = test(args, model, loader)
    np.savez(os.path.join(tempfile.mkdtemp(), "reconstructions.npz"), **recons)
    print(f"{len(recons)} volumes, mean PSNR {mean_psnr:.2f} dB")
