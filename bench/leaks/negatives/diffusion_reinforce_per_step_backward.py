"""Policy-gradient fine-tuning of a diffusion model backpropagates each denoising step as it goes

Source: https://github.com/areal-project/AReaL/pull/1410
Style: diffusion
Kind: negative: backward inside the sampling loop, latents detached between steps (peak ~ one step)
"""
import torch
import torch.nn as nn


class TinyUNet(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(ch + 1, 64, 3, padding=1), nn.SiLU(), nn.Conv2d(64, ch, 3, padding=1))

    def forward(self, x, t):
        return self.net(torch.cat([x, t.view(-1, 1, 1, 1).expand(-1, 1, *x.shape[-2:])], 1))


def ddim_step_logprob(unet, x, t, t_next, alphas_bar, eta=1.0):
    eps = unet(x, torch.full((x.shape[0],), float(t)))
    a, a_next = alphas_bar[t], alphas_bar[t_next]
    x0 = (x - (1 - a).sqrt() * eps) / a.sqrt()
    sigma = eta * ((1 - a_next) / (1 - a) * (1 - a / a_next)).sqrt()
    mean = a_next.sqrt() * x0 + (1 - a_next - sigma ** 2).clamp(min=0).sqrt() * eps
    x_next = mean + sigma * torch.randn_like(x)
    logp = torch.distributions.Normal(mean, sigma + 1e-6).log_prob(x_next.detach()).mean(dim=(1, 2, 3))
    return x_next.detach(), logp


def aesthetic_reward(x):
    return -x.abs().mean(dim=(1, 2, 3))


def train(iterations=2000, steps=20, group=8):
    unet = TinyUNet()
    optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-5)
    alphas_bar = torch.cumprod(1 - torch.linspace(1e-4, 0.02, 1000), 0)
    timesteps = torch.linspace(999, 0, steps + 1).long()
    for it in range(iterations):
        with torch.no_grad():
            x = torch.randn(group, 4, 64, 64)
            trajectory = [x]
            for t, t_next in zip(timesteps[:-1], timesteps[1:]):
                x, _ = ddim_step_logprob(unet, x, t, t_next, alphas_bar)
                trajectory.append(x)
            rewards = aesthetic_reward(x)
            advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-6)
        optimizer.zero_grad()
        for k, (t, t_next) in enumerate(zip(timesteps[:-1], timesteps[1:])):
            _, logp = ddim_step_logprob(unet, trajectory[k], t, t_next, alphas_bar)
            (-(advantages * logp).mean() / steps).backward()
        optimizer.step()


if __name__ == "__main__":
    train()
