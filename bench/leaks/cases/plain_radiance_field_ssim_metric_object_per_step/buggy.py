"""Radiance-field trainer: an object-based SSIM metric is called on every training step and never reset

Source: https://github.com/nerfstudio-project/nerfstudio/pull/81
Style: plain
Kind: a metric module updated every step and never reset: each call of the stateful SSIM object appends the rendered and target patches to its internal state lists, so GPU memory grows step after step outside a Lightning loop that would reset it
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchmetrics.image import StructuralSimilarityIndexMeasure


class TinyField(nn.Module):
    def __init__(self, hidden=128):
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(63, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, 4),
        )

    @staticmethod
    def encode(x, n_freq=10):
        freqs = 2.0 ** torch.arange(n_freq, device=x.device)
        ang = x[..., None] * freqs
        return torch.cat([x, ang.sin().flatten(-2), ang.cos().flatten(-2)], dim=-1)

    def forward(self, points):
        out = self.mlp(self.encode(points))
        return torch.sigmoid(out[..., :3]), F.softplus(out[..., 3])


def render_patch(field, rays_o, rays_d, n_samples=32):
    t = torch.linspace(0.1, 4.0, n_samples, device=rays_o.device)
    pts = rays_o[..., None, :] + rays_d[..., None, :] * t[:, None]
    rgb, sigma = field(pts)
    alpha = 1.0 - torch.exp(-sigma * (t[1] - t[0]))
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[..., :1]), 1.0 - alpha[..., :-1]], -1), -1)
    return ((alpha * trans)[..., None] * rgb).sum(-2)


class FieldTrainer:
    def __init__(self, device):
        self.device = device
        self.field = TinyField().to(device)
        self.optimizer = torch.optim.Adam(self.field.parameters(), lr=5e-4)
        self.ssim = StructuralSimilarityIndexMeasure(data_range=1.0).to(device)  # leak: LL304

    def step(self, rays_o, rays_d, target):
        pred = render_patch(self.field, rays_o, rays_d)
        loss = F.mse_loss(pred, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        with torch.no_grad():
            img_pred = pred.permute(2, 0, 1)[None]
            img_true = target.permute(2, 0, 1)[None]
            ssim = self.ssim(img_pred, img_true)
            psnr = -10.0 * torch.log10(F.mse_loss(pred, target))
        return loss.item(), psnr.item(), ssim.item()


def train(patches, steps=200_000, log_every=100):
    device = torch.device("cuda")
    trainer = FieldTrainer(device)
    for it in range(steps):
        rays_o, rays_d, target = (t.to(device) for t in patches[it % len(patches)])
        loss, psnr, ssim = trainer.step(rays_o, rays_d, target)
        if it % log_every == 0:
            print(f"{it}: loss={loss:.5f} psnr={psnr:.2f} ssim={ssim:.3f}")
