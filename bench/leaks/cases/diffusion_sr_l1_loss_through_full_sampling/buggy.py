"""A super-resolution diffusion model is trained with an L1 loss on images sampled through every denoising step

Source: https://github.com/ChrisDud0257/SSL/issues/4
Style: diffusion
Kind: a diffusion sampler's x updated from the model output inside training (with backward): graph of all steps kept
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SRUNet(nn.Module):
    def __init__(self, ch=64):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(6, ch, 3, padding=1), nn.SiLU(), nn.Conv2d(ch, ch, 3, padding=1), nn.SiLU(), nn.Conv2d(ch, 3, 3, padding=1))
        self.t_embed = nn.Linear(1, ch)

    def forward(self, x_t, lr_up, t):
        return self.net(torch.cat([x_t, lr_up], dim=1))


class SRDiffusion(nn.Module):
    def __init__(self, T=1000):
        super().__init__()
        self.unet, self.T = SRUNet(), T
        betas = torch.linspace(1e-4, 0.02, T)
        self.register_buffer("alphas", 1 - betas)
        self.register_buffer("alpha_bars", torch.cumprod(1 - betas, 0))
        self.register_buffer("betas", betas)

    def sample(self, lr):
        lr_up = F.interpolate(lr, scale_factor=4, mode="bicubic")
        x = torch.randn_like(lr_up)
        for t in reversed(range(self.T)):
            eps = self.unet(x, lr_up, torch.full((x.shape[0], 1), t / self.T, device=x.device))
            mean = (x - self.betas[t] / torch.sqrt(1 - self.alpha_bars[t]) * eps) / torch.sqrt(self.alphas[t])
            x = mean + (torch.sqrt(self.betas[t]) * torch.randn_like(x) if t > 0 else 0)  # leak: LL103
        return x


def train(model, steps=100_000):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for step in range(steps):
        hr = torch.rand(4, 3, 256, 256)
        lr = F.avg_pool2d(hr, 4)
        sr = model.sample(lr)
        loss = F.l1_loss(sr, hr)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(step, loss.item())


if __name__ == "__main__":
    train(SRDiffusion())
