"""DCGAN on face crops: one generator forward per step, detached for the discriminator update and reused for the generator update

Source: https://github.com/pytorch/examples/issues/116
Style: gan
Kind: negative: resembles generator outputs reused across the discriminator and generator updates with their graph kept; the discriminator sees `fake.detach()`, the generator graph is consumed by the generator's own backward in the same step, losses are logged as floats, and preview samples are made under no_grad
"""
import torch
import torch.nn as nn
import torchvision.utils as vutils
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

NZ, NGF, NDF = 100, 64, 64


def generator():
    return nn.Sequential(
        nn.ConvTranspose2d(NZ, NGF * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(NGF * 8), nn.ReLU(True),
        nn.ConvTranspose2d(NGF * 8, NGF * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF * 4), nn.ReLU(True),
        nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF * 2), nn.ReLU(True),
        nn.ConvTranspose2d(NGF * 2, NGF, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF), nn.ReLU(True),
        nn.ConvTranspose2d(NGF, 3, 4, 2, 1, bias=False), nn.Tanh())


def discriminator():
    return nn.Sequential(
        nn.Conv2d(3, NDF, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True),
        nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(NDF * 2), nn.LeakyReLU(0.2, True),
        nn.Conv2d(NDF * 2, NDF * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(NDF * 4), nn.LeakyReLU(0.2, True),
        nn.Conv2d(NDF * 4, NDF * 8, 4, 2, 1, bias=False), nn.BatchNorm2d(NDF * 8), nn.LeakyReLU(0.2, True),
        nn.Conv2d(NDF * 8, 1, 4, 1, 0, bias=False), nn.Flatten())


def train(root="data/celeba", epochs=25, device="cuda"):
    tf = transforms.Compose([transforms.Resize(64), transforms.CenterCrop(64), transforms.ToTensor(),
                             transforms.Normalize((0.5,) * 3, (0.5,) * 3)])
    loader = DataLoader(datasets.ImageFolder(root, tf), batch_size=128, shuffle=True, num_workers=4)
    net_g, net_d = generator().to(device), discriminator().to(device)
    opt_g = torch.optim.Adam(net_g.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(net_d.parameters(), lr=2e-4, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    fixed_noise = torch.randn(64, NZ, 1, 1, device=device)
    g_losses, d_losses = [], []
    for epoch in range(epochs):
        for i, (real, _) in enumerate(loader):
            real = real.to(device)
            b = real.size(0)
            ones, zeros = torch.ones(b, 1, device=device), torch.zeros(b, 1, device=device)
            fake = net_g(torch.randn(b, NZ, 1, 1, device=device))

            net_d.zero_grad()
            err_d = bce(net_d(real), ones) + bce(net_d(fake.detach()), zeros)
            err_d.backward()
            opt_d.step()

            net_g.zero_grad()
            err_g = bce(net_d(fake), ones)
            err_g.backward()
            opt_g.step()

            d_losses.append(err_d.item())
            g_losses.append(err_g.item())
            if i % 50 == 0:
                print(f"[{epoch}/{epochs}][{i}/{len(loader)}] D {d_losses[-1]:.4f} G {g_losses[-1]:.4f}")
        with torch.no_grad():
            preview = net_g(fixed_noise).cpu()
        vutils.save_image(preview, f"samples/epoch_{epoch:03d}.png", normalize=True)
    return g_losses, d_losses


if __name__ == "__main__":
    train()
