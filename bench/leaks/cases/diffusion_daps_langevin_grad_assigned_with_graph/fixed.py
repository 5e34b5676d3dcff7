"""Decoupled annealing posterior sampling (DAPS) for inpainting: Langevin steps set x.grad by hand before an SGD step

Source: https://github.com/devzhk/InverseBench/pull/22
Style: diffusion
Kind: a gradient that carries a graph is stored in a leaf's .grad: the anchor term (x - x0hat) / sigma**2 is computed from x itself (requires_grad=True), so x.grad -> grad_fn -> AccumulateGrad(x) -> x is a reference cycle through autograd's C++ objects that the garbage collector cannot free; every Langevin call of every annealing step leaves its x and gradient allocated on the GPU (fixed by detaching the anchor input and the assigned gradient and clearing x.grad before returning)
"""
import numpy as np
import torch
import torch.nn as nn


class Denoiser(nn.Module):
    """Stand-in for a pretrained EDM denoiser D(x; sigma)."""

    def __init__(self, channels=3, width=64):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(channels + 1, width, 3, padding=1), nn.SiLU(),
                                 nn.Conv2d(width, width, 3, padding=1), nn.SiLU(),
                                 nn.Conv2d(width, channels, 3, padding=1))

    def forward(self, x, sigma):
        s = torch.full_like(x[:, :1], float(sigma)).log()
        return x - sigma * self.net(torch.cat([x, s], dim=1))


class Inpainting:
    def __init__(self, mask, device):
        self.mask = mask.to(device)
        self.device = device

    def __call__(self, x):
        return x * self.mask

    def gradient(self, x, measurement):
        with torch.enable_grad():
            x_ = x.detach().requires_grad_(True)
            loss = ((self(x_) - measurement) ** 2).sum()
            return torch.autograd.grad(loss, x_)[0]


def karras_sigmas(n, sigma_min=0.002, sigma_max=80.0, rho=7.0):
    ramp = np.linspace(0, 1, n)
    return (sigma_max ** (1 / rho) + ramp * (sigma_min ** (1 / rho) - sigma_max ** (1 / rho))) ** rho


@torch.no_grad()
def ode_x0(net, xt, sigma, steps=5):
    sigmas = karras_sigmas(steps + 1, sigma_max=float(sigma))
    x = xt
    for s_cur, s_next in zip(sigmas[:-1], sigmas[1:]):
        d = (x - net(x, s_cur)) / s_cur
        x = x + (s_next - s_cur) * d
    return x


class LangevinDynamics:
    def __init__(self, num_steps=100, lr=1e-4, tau=0.01, lr_min_ratio=0.01):
        self.num_steps, self.lr, self.tau, self.lr_min_ratio = num_steps, lr, tau, lr_min_ratio

    def get_lr(self, ratio):
        return (1 + ratio * (self.lr_min_ratio - 1)) * self.lr

    def sample(self, x0hat, operator, measurement, sigma, ratio):
        lr = self.get_lr(ratio)
        x0hat = x0hat.detach()
        x = x0hat.clone().detach().requires_grad_(True)
        optimizer = torch.optim.SGD([x], lr)
        for _ in range(self.num_steps):
            optimizer.zero_grad()
            gradient = operator.gradient(x, measurement) / (2 * self.tau ** 2)
            gradient += (x.detach() - x0hat) / sigma ** 2
            x.grad = gradient.detach()
            optimizer.step()
            with torch.no_grad():
                x.data = x.data + np.sqrt(2 * lr) * torch.randn_like(x)
            if torch.isnan(x).any():
                x.grad = None
                return torch.zeros_like(x)
        x.grad = None
        return x.detach()


class DAPS:
    def __init__(self, net, operator, annealing_steps=200, lgvd=None):
        self.net = net.eval().requires_grad_(False)
        self.operator = operator
        self.sigmas = karras_sigmas(annealing_steps + 1, sigma_min=0.1)
        self.lgvd = lgvd or LangevinDynamics()

    def inference(self, observation, num_samples=1):
        xt = torch.randn(num_samples, *observation.shape[1:], device=observation.device) * self.sigmas[0]
        steps = len(self.sigmas) - 1
        for step in range(steps):
            sigma = float(self.sigmas[step])
            x0hat = ode_x0(self.net, xt, sigma)
            x0y = self.lgvd.sample(x0hat, self.operator, observation, sigma, step / steps)
            xt = x0y + torch.randn_like(x0y) * float(self.sigmas[step + 1])
        return xt


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    mask = (torch.rand(1, 1, 256, 256) > 0.7).float()
    operator = Inpainting(mask, device)
    sampler = DAPS(Denoiser().to(device), operator)
    for i in range(100):
        image = torch.rand(4, 3, 256, 256, device=device) * 2 - 1
        recon = sampler.inference(operator(image), num_samples=4)
        print(i, float(((recon - image) ** 2).mean()))
