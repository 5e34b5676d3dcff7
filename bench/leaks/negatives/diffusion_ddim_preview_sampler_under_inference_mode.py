"""Small DDPM trainer that renders a DDIM preview grid every few thousand steps, with the sampler under torch.inference_mode()

Source: https://pytorch.org/docs/stable/generated/torch.autograd.grad_mode.inference_mode.html
Style: diffusion
Kind: negative: resembles a sampler's x chained through the trainable model's output across steps (hidden-state carry) and an evaluation forward without no_grad inside the training loop; the preview sampler is decorated with @torch.inference_mode(), so no step records a graph, the EMA copy is the one sampled, and the grid leaves as uint8 on the CPU before it is saved
"""
import copy

import torch
import torch.nn.functional as F
from torchvision.utils import save_image


def make_schedule(T=1000, device="cuda"):
    betas = torch.linspace(1e-4, 0.02, T, device=device)
    return torch.cumprod(1.0 - betas, dim=0)


@torch.inference_mode()
def ddim_preview(unet, alphas_bar, n=16, size=64, steps=50, device="cuda"):
    unet.eval()
    x = torch.randn(n, 3, size, size, device=device)
    ts = torch.linspace(len(alphas_bar) - 1, 0, steps, device=device).long()
    for i, t in enumerate(ts):
        a_t = alphas_bar[t]
        a_prev = alphas_bar[ts[i + 1]] if i + 1 < len(ts) else torch.ones((), device=device)
        eps = unet(x, t.expand(n))
        x0 = (x - (1 - a_t).sqrt() * eps) / a_t.sqrt()
        x = a_prev.sqrt() * x0.clamp(-1, 1) + (1 - a_prev).sqrt() * eps
    return ((x.clamp(-1, 1) + 1) * 127.5).to(torch.uint8).cpu()


@torch.no_grad()
def ema_update(ema, model, decay=0.9999):
    for pe, p in zip(ema.parameters(), model.parameters()):
        pe.lerp_(p, 1 - decay)


def train(unet, loader, iters=200000, preview_every=5000, device="cuda"):
    unet.to(device)
    ema = copy.deepcopy(unet).requires_grad_(False)
    opt = torch.optim.AdamW(unet.parameters(), lr=2e-4)
    alphas_bar = make_schedule(device=device)
    step = 0
    while step < iters:
        for x0, _ in loader:
            x0 = x0.to(device)
            t = torch.randint(0, len(alphas_bar), (x0.shape[0],), device=device)
            noise = torch.randn_like(x0)
            a = alphas_bar[t].view(-1, 1, 1, 1)
            loss = F.mse_loss(unet(a.sqrt() * x0 + (1 - a).sqrt() * noise, t), noise)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            ema_update(ema, unet)
            step += 1
            if step % preview_every == 0:
                grid = ddim_preview(ema, alphas_bar, device=device)
                save_image(grid.float() / 255.0, f"preview_{step:07d}.png", nrow=4)
                print(f"step {step}: loss {loss.item():.4f}")
            if step >= iters:
                break
