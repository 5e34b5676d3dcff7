"""SRGAN validation wraps only the tensor conversions in no_grad; the generator forward and the metric sums keep graphs

Source: https://github.com/leftthomas/SRGAN/issues/43
Style: gan
Kind: evaluation forward records a graph nobody uses, and the running MSE/SSIM sums keep every batch's graph until the epoch ends
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from tqdm import tqdm


class Generator(nn.Module):
    def __init__(self, scale=4, ch=64, blocks=16):
        super().__init__()
        self.head = nn.Sequential(nn.Conv2d(3, ch, 9, padding=4), nn.PReLU())
        self.body = nn.Sequential(*[nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1), nn.BatchNorm2d(ch), nn.PReLU())
                                    for _ in range(blocks)])
        ups = []
        for _ in range(int(math.log2(scale))):
            ups += [nn.Conv2d(ch, ch * 4, 3, padding=1), nn.PixelShuffle(2), nn.PReLU()]
        self.tail = nn.Sequential(*ups, nn.Conv2d(ch, 3, 9, padding=4))

    def forward(self, x):
        h = self.head(x)
        return (torch.tanh(self.tail(h + self.body(h))) + 1) / 2


def ssim(a, b, c1=0.01 ** 2, c2=0.03 ** 2):
    mu_a, mu_b = F.avg_pool2d(a, 11, 1, 5), F.avg_pool2d(b, 11, 1, 5)
    var_a = F.avg_pool2d(a * a, 11, 1, 5) - mu_a ** 2
    var_b = F.avg_pool2d(b * b, 11, 1, 5) - mu_b ** 2
    cov = F.avg_pool2d(a * b, 11, 1, 5) - mu_a * mu_b
    return (((2 * mu_a * mu_b + c1) * (2 * cov + c2)) / ((mu_a ** 2 + mu_b ** 2 + c1) * (var_a + var_b + c2))).mean()


def validate(netG, val_loader, device):
    netG.eval()
    results = {"mse": 0, "ssims": 0, "batch_sizes": 0}
    val_bar = tqdm(val_loader)
    for val_lr, val_hr in val_bar:
        with torch.no_grad():
            lr = val_lr.to(device)
            hr = val_hr.to(device)
        batch_size = lr.size(0)
        results["batch_sizes"] += batch_size
        sr = netG(lr)  # leak: LL201
        batch_mse = ((sr - hr) ** 2).mean()
        results["mse"] += batch_mse * batch_size  # leak: LL101
        results["ssims"] += ssim(sr, hr) * batch_size  # leak: LL101
        psnr = 10 * math.log10(1 / (float(results["mse"]) / results["batch_sizes"]))
        val_bar.set_description(f"[val] PSNR {psnr:.2f} dB SSIM {float(results['ssims']) / results['batch_sizes']:.4f}")
    return psnr


def main(epochs=100):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    netG = Generator().to(device)
    netD = nn.Sequential(nn.Conv2d(3, 64, 3, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(64, 128, 3, 2, 1), nn.LeakyReLU(0.2),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 1)).to(device)
    opt_g, opt_d = torch.optim.Adam(netG.parameters()), torch.optim.Adam(netD.parameters())
    hr = torch.rand(6000, 3, 88, 88)
    train_loader = DataLoader(TensorDataset(F.avg_pool2d(hr, 4), hr), batch_size=64, shuffle=True)
    val_hr = torch.rand(1000, 3, 256, 256)
    val_loader = DataLoader(TensorDataset(F.avg_pool2d(val_hr, 4), val_hr), batch_size=1)
    for epoch in range(epochs):
        netG.train()
        for lr, real in train_loader:
            lr, real = lr.to(device), real.to(device)
            fake = netG(lr)
            d_loss = F.softplus(-netD(real)).mean() + F.softplus(netD(fake.detach())).mean()
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()
            g_loss = F.mse_loss(fake, real) + 1e-3 * F.softplus(-netD(fake)).mean()
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
        print(epoch, validate(netG, val_loader, device))


if __name__ == "__main__":
    main()
