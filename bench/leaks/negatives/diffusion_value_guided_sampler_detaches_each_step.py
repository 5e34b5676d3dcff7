"""A value-guided trajectory sampler takes a gradient of the value function each step and detaches x

Source: https://github.com/huggingface/diffusers/pull/884
Style: diffusion
Kind: negative: a sampler's x updated from model outputs, with gradients (x detached every step)
"""
import torch
import torch.nn as nn


class TemporalUnet(nn.Module):
    def __init__(self, transition_dim=14, horizon=32):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(transition_dim * horizon + 1, 512), nn.Mish(), nn.Linear(512, transition_dim * horizon))
        self.shape = (horizon, transition_dim)

    def forward(self, x, t):
        return self.net(torch.cat([x.flatten(1), t[:, None].float()], 1)).view(-1, *self.shape)


class ValueFunction(nn.Module):
    def __init__(self, transition_dim=14, horizon=32):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(transition_dim * horizon, 256), nn.Mish(), nn.Linear(256, 1))

    def forward(self, x, t):
        return self.net(x)


def run_diffusion(unet, value_fn, x, conditions, n_steps=20, n_guide_steps=2, scale=0.1):
    betas = torch.linspace(1e-4, 0.02, n_steps)
    alphas_bar = torch.cumprod(1 - betas, 0)
    for i in reversed(range(n_steps)):
        timesteps = torch.full((x.shape[0],), i, dtype=torch.long)
        for _ in range(n_guide_steps):
            with torch.enable_grad():
                x.requires_grad_()
                y = value_fn(x, timesteps)
                grad = torch.autograd.grad([y.sum()], [x])[0]
            x = x.detach()
            x = x + scale * betas[i].sqrt() * grad
            x[:, 0, : conditions.shape[-1]] = conditions
        with torch.no_grad():
            eps = unet(x, timesteps)
            x = (x - betas[i] / (1 - alphas_bar[i]).sqrt() * eps) / (1 - betas[i]).sqrt()
        x[:, 0, : conditions.shape[-1]] = conditions
    return x


if __name__ == "__main__":
    unet, value_fn = TemporalUnet().eval(), ValueFunction().eval()
    for episode in range(1000):
        obs = torch.randn(64, 11)
        plans = run_diffusion(unet, value_fn, torch.randn(64, 32, 14), obs)
        print(episode, plans[:, 1, 11:].mean().item())
