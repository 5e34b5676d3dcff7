"""AverageMeter fed the loss tensor of a compression model keeps every step's graph

Source: https://github.com/lyq133/LIC-HPCM/issues/4
Style: plain
Kind: graph kept across steps through a meter's update()
Runnable from: bench/leaks/cases/plain_meter_update_loss_tensor
"""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class AverageMeter:
    """Running average of a scalar shown in the progress line."""

    def __init__(self):
        self.val = 0.0
        self.sum = 0.0
        self.count = 0
        self.avg = 0.0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class TinyCodec(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.encode = nn.Sequential(nn.Conv2d(3, channels, 5, 2, 2), nn.GELU(), nn.Conv2d(channels, channels, 5, 2, 2))
        self.decode = nn.Sequential(nn.ConvTranspose2d(channels, channels, 4, 2, 1), nn.GELU(), nn.ConvTranspose2d(channels, 3, 4, 2, 1))

    def forward(self, x):
        latent = self.encode(x)
        noisy = latent + torch.empty_like(latent).uniform_(-0.5, 0.5)
        return self.decode(noisy), latent


def rate_distortion(recon, latent, target, lmbda):
    mse = nn.functional.mse_loss(recon, target)
    bpp = torch.log1p(latent.abs()).mean()
    return {"loss": lmbda * 255 ** 2 * mse + bpp, "mse": mse, "bpp": bpp}


def train_one_epoch(model, loader, optimizer, lmbda):
    model.train()
    loss_meter = AverageMeter()
    bpp_meter = AverageMeter()
    for step, (images,) in enumerate(loader):
        optimizer.zero_grad()
        recon, latent = model(images)
        out_criterion = rate_distortion(recon, latent, images, lmbda)
        out_criterion["loss"].backward()
        optimizer.step()
        loss_meter.update(out_criterion["loss"].item())
        bpp_meter.update(out_criterion["bpp"].item())
        if step % 50 == 0:
            print(f"step {step}: loss {loss_meter.avg:.4f} bpp {bpp_meter.avg:.4f}")
    return loss_meter.avg


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lmbda", type=float, default=0.013)
    args = parser.parse_args()
    torch.manual_seed(0)
    loader = DataLoader(TensorDataset(torch.rand(800, 3, 32, 32)), batch_size=4, shuffle=True)
    model = TinyCodec()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(args.epochs):
        avg = train_one_epoch(model, loader, optimizer, args.lmbda)
        print(f"epoch {epoch}: {float(avg):.4f}")


if __name__ == "__main__":
    main()
