"""DDPM on BraTS slices: the reverse (generation) process runs without torch.no_grad(); a batch of 2 needs >48 GB

Source: https://github.com/w86763777/pytorch-ddpm/issues/13
Style: diffusion
Kind: a diffusion sampler's x updated from the model output with autograd on: the graph of all reverse steps is chained through x_t
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyUNet(nn.Module):
    def __init__(self, ch=64, T=1000):
        super().__init__()
        self.time = nn.Embedding(T, ch)
        self.down = nn.Sequential(nn.Conv2d(1, ch, 3, padding=1), nn.SiLU(), nn.Conv2d(ch, ch, 3, 2, 1), nn.SiLU())
        self.mid = nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1), nn.SiLU())
        self.up = nn.Sequential(nn.ConvTranspose2d(ch, ch, 4, 2, 1), nn.SiLU(), nn.Conv2d(ch, 1, 3, padding=1))

    def forward(self, x, t):
        h = self.down(x) + self.time(t)[:, :, None, None]
        return self.up(self.mid(h))


class GaussianDiffusion(nn.Module):
    def __init__(self, model, T=1000, beta_1=1e-4, beta_T=0.02):
        super().__init__()
        self.model, self.T = model, T
        betas = torch.linspace(beta_1, beta_T, T)
        alphas_bar = torch.cumprod(1 - betas, 0)
        alphas_bar_prev = F.pad(alphas_bar, [1, 0], value=1)[:T]
        self.register_buffer("betas", betas)
        self.register_buffer("sqrt_recip_alphas_bar", torch.sqrt(1 / alphas_bar))
        self.register_buffer("sqrt_recipm1_alphas_bar", torch.sqrt(1 / alphas_bar - 1))
        self.register_buffer("posterior_var", betas * (1 - alphas_bar_prev) / (1 - alphas_bar))
        self.register_buffer("posterior_mean_c1", torch.sqrt(alphas_bar_prev) * betas / (1 - alphas_bar))
        self.register_buffer("posterior_mean_c2", torch.sqrt(1 - betas) * (1 - alphas_bar_prev) / (1 - alphas_bar))

    def training_loss(self, x_0):
        t = torch.randint(self.T, (x_0.shape[0],), device=x_0.device)
        noise = torch.randn_like(x_0)
        a = (1 / self.sqrt_recip_alphas_bar[t])[:, None, None, None]
        x_t = a * x_0 + torch.sqrt(1 - a ** 2) * noise
        return F.mse_loss(self.model(x_t, t), noise)

    def p_mean_variance(self, x_t, t):
        eps = self.model(x_t, t)
        x_0 = self.sqrt_recip_alphas_bar[t][:, None, None, None] * x_t - self.sqrt_recipm1_alphas_bar[t][:, None, None, None] * eps
        mean = self.posterior_mean_c1[t][:, None, None, None] * x_0.clamp(-1, 1) + self.posterior_mean_c2[t][:, None, None, None] * x_t
        return mean, self.posterior_var[t][:, None, None, None]

    def sample(self, x_T):
        x_t = x_T
        for step in reversed(range(self.T)):
            t = torch.full((x_T.shape[0],), step, device=x_T.device, dtype=torch.long)
            mean, var = self.p_mean_variance(x_t, t)
            noise = torch.randn_like(x_t) if step > 0 else 0
            x_t = mean + torch.sqrt(var) * noise  # leak: LL103
        return x_t.clamp(-1, 1)


def main(steps=20_000, device="cuda"):
    diffusion = GaussianDiffusion(TinyUNet()).to(device)
    optimizer = torch.optim.Adam(diffusion.parameters(), lr=2e-4)
    slices = torch.rand(2000, 1, 128, 128) * 2 - 1  # BraTS FLAIR slices scaled to [-1, 1]
    for step in range(steps):
        batch = slices[torch.randint(0, len(slices), (16,))].to(device)
        loss = diffusion.training_loss(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 5000 == 0:
            samples = diffusion.sample(torch.randn(2, 1, 128, 128, device=device))
            torch.save(samples.detach().cpu(), f"samples_{step}.pt")


if __name__ == "__main__":
    main()
