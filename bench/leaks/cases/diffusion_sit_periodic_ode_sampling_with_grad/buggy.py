"""A flow-matching transformer draws preview samples with an ODE sampler every N steps, with autograd on

Source: https://github.com/willisma/SiT/pull/43
Style: diffusion
Kind: sampling during training records a graph nobody uses: the preview ODE integration calls the trainable model at every solver step with grad enabled, so x is chained through every step's graph (and classifier-free guidance doubles the batch) until the samples are saved; OOM at the first sampling step
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.utils import save_image

IMG, CH, NUM_CLASSES = 32, 4, 1000


class TinySiT(nn.Module):
    def __init__(self, dim=384, depth=8, patch=2):
        super().__init__()
        self.patch = patch
        self.embed = nn.Conv2d(CH, dim, patch, stride=patch)
        self.t_embed = nn.Sequential(nn.Linear(1, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.y_embed = nn.Embedding(NUM_CLASSES + 1, dim)
        layer = nn.TransformerEncoderLayer(dim, 6, 4 * dim, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth)
        self.out = nn.Linear(dim, CH * patch * patch)

    def forward(self, x, t, y):
        h = self.embed(x).flatten(2).transpose(1, 2)
        h = h + (self.t_embed(t[:, None]) + self.y_embed(y))[:, None]
        h = self.out(self.blocks(h))
        return F.fold(h.transpose(1, 2), (IMG, IMG), self.patch, stride=self.patch)

    def forward_with_cfg(self, x, t, y, cfg_scale):
        half = x[: len(x) // 2]
        both = torch.cat([half, half])
        v = self(both, t, y)
        cond, uncond = v.chunk(2)
        guided = uncond + cfg_scale * (cond - uncond)
        return torch.cat([guided, guided])


def sample_ode(model_fn, z, y, steps=50, cfg_scale=4.0):
    x = z
    ts = torch.linspace(1.0, 0.0, steps + 1, device=z.device)
    for i in range(steps):
        t, dt = ts[i], ts[i + 1] - ts[i]
        v = model_fn(x, t.expand(len(x)), y, cfg_scale)
        x_pred = x + dt * v
        v2 = model_fn(x_pred, ts[i + 1].expand(len(x)), y, cfg_scale)
        x = x + dt * 0.5 * (v + v2)
    return x


def training_loss(model, x1, y):
    t = torch.rand(len(x1), device=x1.device)
    x0 = torch.randn_like(x1)
    xt = (1 - t[:, None, None, None]) * x1 + t[:, None, None, None] * x0
    return F.mse_loss(model(xt, t, y), x0 - x1)


def main(total_steps=400_000, sample_every=10_000, batch=256):
    device = "cuda"
    model = TinySiT().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0)
    n = 16
    zs = torch.randn(n, CH, IMG, IMG, device=device)
    zs = torch.cat([zs, zs])
    ys = torch.cat([torch.randint(0, NUM_CLASSES, (n,), device=device),
                    torch.full((n,), NUM_CLASSES, device=device)])
    for step in range(1, total_steps + 1):
        latents = torch.randn(batch, CH, IMG, IMG, device=device)
        labels = torch.randint(0, NUM_CLASSES, (batch,), device=device)
        labels = torch.where(torch.rand(batch, device=device) < 0.1, NUM_CLASSES, labels)
        loss = training_loss(model, latents, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % sample_every == 0:
            model.eval()
            samples = sample_ode(model.forward_with_cfg, zs, ys)  # leak: LL201
            model.train()
            save_image(samples[:n, :3].clamp(-1, 1) * 0.5 + 0.5, f"preview_{step:07d}.png", nrow=4)
            print(f"step {step}: loss {loss.item():.4f}, samples saved")


if __name__ == "__main__":
    main()
