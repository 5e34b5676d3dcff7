"""A latent diffusion trainer saves preview grids every few thousand steps from a sampler decorated with torch.no_grad

Source: https://pytorch.org/docs/stable/generated/torch.autograd.grad_mode.no_grad.html
Source: https://github.com/willisma/SiT/pull/43
Style: diffusion
Kind: negative: resembles a sampling loop chaining x through the trainable model's output inside the training loop (LL201, LL103); the sampler function is decorated with @torch.no_grad(), which disables graph recording for every call, and the model is put back in train mode afterwards
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.utils import save_image


class TinyUNet(nn.Module):
    def __init__(self, ch=4, width=128):
        super().__init__()
        self.t_mlp = nn.Sequential(nn.Linear(1, width), nn.SiLU(), nn.Linear(width, width))
        self.down = nn.Conv2d(ch, width, 3, stride=2, padding=1)
        self.mid = nn.Sequential(nn.GroupNorm(8, width), nn.SiLU(), nn.Conv2d(width, width, 3, padding=1))
        self.up = nn.ConvTranspose2d(width, ch, 4, stride=2, padding=1)

    def forward(self, x, t):
        h = self.down(x) + self.t_mlp(t[:, None])[:, :, None, None]
        return self.up(h + self.mid(h))


@torch.no_grad()
def ddim_preview(model, shape, alphas_cumprod, steps=100, device="cuda"):
    x = torch.randn(shape, device=device)
    timesteps = torch.linspace(len(alphas_cumprod) - 1, 0, steps, device=device).long()
    for i, t in enumerate(timesteps):
        a_t = alphas_cumprod[t]
        a_prev = alphas_cumprod[timesteps[i + 1]] if i + 1 < steps else torch.tensor(1.0, device=device)
        eps = model(x, t.float().expand(shape[0]) / len(alphas_cumprod))
        x0 = (x - (1 - a_t).sqrt() * eps) / a_t.sqrt()
        x = a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * eps
    return x


def main(total_steps=200_000, preview_every=5_000, batch=128, T=1000):
    device = "cuda"
    model = TinyUNet().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4)
    betas = torch.linspace(1e-4, 0.02, T, device=device)
    alphas_cumprod = torch.cumprod(1 - betas, dim=0)
    for step in range(1, total_steps + 1):
        x0 = torch.randn(batch, 4, 32, 32, device=device)
        t = torch.randint(0, T, (batch,), device=device)
        noise = torch.randn_like(x0)
        a = alphas_cumprod[t][:, None, None, None]
        xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
        loss = F.mse_loss(model(xt, t.float() / T), noise)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % preview_every == 0:
            model.eval()
            samples = ddim_preview(model, (16, 4, 32, 32), alphas_cumprod, device=device)
            model.train()
            save_image(samples[:, :3].clamp(-1, 1) * 0.5 + 0.5, f"preview_{step:07d}.png", nrow=4)
            print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
