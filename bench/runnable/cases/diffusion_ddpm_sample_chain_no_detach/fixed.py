"""A conditional DDPM's sample() updates x_i from the model output with autograd recording

Source: https://github.com/TeaPearce/Conditional_Diffusion_MNIST/issues/12
Style: diffusion
Kind: a diffusion sampler's x updated from the model output, the graph chained over all steps
Runnable from: bench/leaks/cases/diffusion_ddpm_sample_chain_no_detach
Run: --step __main__:ContextUnet.forward
"""
import os
import tempfile

import torch
import torch.nn as nn


class ContextUnet(nn.Module):
    def __init__(self, in_channels=1, n_feat=16, n_classes=10):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(in_channels, n_feat, 3, padding=1), nn.GELU(), nn.Conv2d(n_feat, n_feat, 3, padding=1), nn.GELU())
        self.time_embed = nn.Linear(1, n_feat)
        self.context_embed = nn.Linear(n_classes, n_feat)
        self.out = nn.Conv2d(n_feat, in_channels, 3, padding=1)

    def forward(self, x, c, t, context_mask):
        c = nn.functional.one_hot(c, 10).float() * (1 - context_mask[:, None])
        h = self.down(x) * self.context_embed(c)[..., None, None] + self.time_embed(t[:, None])[..., None, None]
        return self.out(h)


class DDPM(nn.Module):
    def __init__(self, nn_model, betas=(1e-4, 0.02), n_T=100):
        super().__init__()
        self.nn_model, self.n_T = nn_model, n_T
        beta_t = torch.linspace(betas[0], betas[1], n_T + 1)
        alpha_t = 1 - beta_t
        alphabar_t = torch.cumprod(alpha_t, 0)
        self.register_buffer("oneover_sqrta", 1 / torch.sqrt(alpha_t))
        self.register_buffer("mab_over_sqrtmab", (1 - alpha_t) / torch.sqrt(1 - alphabar_t))
        self.register_buffer("sqrt_beta_t", torch.sqrt(beta_t))

    def sample(self, n_sample, size, guide_w=2.0):
        x_i = torch.randn(n_sample, *size)
        c_i = torch.arange(0, 10).repeat(n_sample // 10 + 1)[:n_sample]
        context_mask = torch.zeros_like(c_i, dtype=torch.float)
        c_i, context_mask = c_i.repeat(2), torch.cat([context_mask, torch.ones_like(context_mask)])
        for i in range(self.n_T, 0, -1):
            t_is = torch.full((n_sample * 2,), i / self.n_T)
            z = torch.randn(n_sample, *size) if i > 1 else 0
            eps = self.nn_model(x_i.repeat(2, 1, 1, 1), c_i, t_is, context_mask)
            eps = (1 + guide_w) * eps[:n_sample] - guide_w * eps[n_sample:]
            x_i = self.oneover_sqrta[i] * (x_i - eps * self.mab_over_sqrtmab[i]) + self.sqrt_beta_t[i] * z
            x_i = x_i.detach()
        return x_i


if __name__ == "__main__":
    torch.manual_seed(0)
    ddpm = DDPM(ContextUnet())
    ddpm.eval()
    out = tempfile.mkdtemp()
    for w in (0.0, 0.5, 2.0):
        x_gen = ddpm.sample(4, (1, 16, 16), guide_w=w)
        torch.save(x_gen.detach(), os.path.join(out, f"image_w{w}.pt"))
