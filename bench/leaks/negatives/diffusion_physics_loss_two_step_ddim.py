"""A physics-informed diffusion model adds a residual loss on a two-step DDIM sample during training

Source: https://github.com/jhbastek/PhysicsInformedDiffusionModels/issues/1
Style: diffusion
Kind: negative: model output fed into a second denoising step with gradients (graph used by this step's backward)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FieldDenoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(2, 64, 3, padding=1), nn.SiLU(), nn.Conv2d(64, 1, 3, padding=1))

    def forward(self, x, t):
        return self.net(torch.cat([x, t.view(-1, 1, 1, 1).expand_as(x)], 1))


def laplacian_residual(u):
    kernel = torch.tensor([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]).view(1, 1, 3, 3)
    return F.conv2d(u, kernel, padding=1)


def ddim_x0(model, x_t, t, alphas_bar, reduced_steps=(1, 0)):
    x = x_t
    for t_next in reduced_steps:
        a, a_next = alphas_bar[t], alphas_bar[t_next]
        eps = model(x, t.float().expand(x.shape[0]) / 1000)
        x0 = (x - (1 - a).sqrt() * eps) / a.sqrt()
        x = a_next.sqrt() * x0 + (1 - a_next).sqrt() * eps
        t = torch.tensor(t_next)
    return x0


if __name__ == "__main__":
    model = FieldDenoiser()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    alphas_bar = torch.cumprod(1 - torch.linspace(1e-4, 0.02, 1000), 0)
    for step in range(50_000):
        u0 = torch.randn(16, 1, 64, 64)
        t = torch.randint(2, 1000, ())
        noise = torch.randn_like(u0)
        x_t = alphas_bar[t].sqrt() * u0 + (1 - alphas_bar[t]).sqrt() * noise
        denoise_loss = F.mse_loss(model(x_t, t.float().expand(16) / 1000), noise)
        residual = laplacian_residual(ddim_x0(model, x_t, t, alphas_bar)).pow(2).mean()
        loss = denoise_loss + 1e-3 * residual
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
