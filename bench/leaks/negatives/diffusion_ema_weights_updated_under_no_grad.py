"""The EMA copy of a diffusion UNet is updated from the live weights under torch.no_grad() every step

Source: https://pytorch.org/docs/stable/optim.html
Style: diffusion
Kind: negative: an exponential moving average updated every step (of parameters, without graph)
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class UNet(nn.Module):
    def __init__(self, ch=128):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(4, ch, 3, padding=1), nn.SiLU(), nn.Conv2d(ch, ch, 3, padding=1), nn.SiLU(), nn.Conv2d(ch, 3, 3, padding=1))

    def forward(self, x, t):
        return self.net(torch.cat([x, t.view(-1, 1, 1, 1).expand(-1, 1, *x.shape[-2:])], 1))


class EMA:
    def __init__(self, model, decay=0.9999):
        self.shadow = copy.deepcopy(model).eval()
        self.decay = decay
        for p in self.shadow.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        for ema_p, p in zip(self.shadow.parameters(), model.parameters()):
            ema_p.mul_(self.decay).add_(p, alpha=1 - self.decay)


def train(steps=800_000):
    model = UNet()
    ema = EMA(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
    alphas_bar = torch.cumprod(1 - torch.linspace(1e-4, 0.02, 1000), 0)
    for step in range(steps):
        x0 = torch.rand(128, 3, 32, 32) * 2 - 1
        t = torch.randint(0, 1000, (128,))
        noise = torch.randn_like(x0)
        a = alphas_bar[t].view(-1, 1, 1, 1)
        loss = F.mse_loss(model(a.sqrt() * x0 + (1 - a).sqrt() * noise, t.float() / 1000), noise)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema.update(model)
        if step % 10_000 == 0:
            torch.save(ema.shadow.state_dict(), f"ema_{step}.pt")


if __name__ == "__main__":
    train()
