"""DAPS posterior sampling with an explicit score update: Langevin moves built from a measurement gradient and detached prior terms

Source: https://github.com/zhangbingliang2019/DAPS
Style: diffusion
Kind: negative: resembles a sampler chaining x through gradient computations across steps and a sampler object keeping tensors on self (prior score, HMC velocity, a recorded trajectory); the measurement gradient comes from torch.autograd.grad on a detached copy, every other term is computed from detached tensors, nothing is stored in a .grad, and the state on self is detached and replaced on every call
"""
import numpy as np
import torch
import torch.nn as nn


class ScoreNet(nn.Module):
    def __init__(self, channels=3, width=64):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(channels + 1, width, 3, padding=1), nn.SiLU(),
                                 nn.Conv2d(width, channels, 3, padding=1))

    def denoise(self, x, sigma):
        s = torch.full_like(x[:, :1], float(sigma)).log()
        return x - sigma * self.net(torch.cat([x, s], dim=1))


class Deblur:
    def __init__(self, kernel_size=9, device="cpu"):
        k = torch.ones(1, 1, kernel_size, kernel_size, device=device) / kernel_size ** 2
        self.blur = lambda x: torch.nn.functional.conv2d(x, k.expand(3, 1, -1, -1), padding=kernel_size // 2, groups=3)

    def gradient(self, x, measurement):
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            loss = ((self.blur(x) - measurement) ** 2).flatten(1).sum(-1)
            grad = torch.autograd.grad(loss.sum(), x)[0]
        return grad, loss.detach()


class MCMCSampler:
    def __init__(self, num_steps=100, lr=1e-4, tau=0.01, lr_min_ratio=0.01, mc_algo="langevin", momentum=0.9):
        self.num_steps, self.lr, self.tau, self.lr_min_ratio = num_steps, lr, tau, lr_min_ratio
        self.mc_algo, self.momentum = mc_algo, momentum

    def get_lr(self, ratio):
        return (1 + ratio * (self.lr_min_ratio - 1)) * self.lr

    def score(self, x, xt, operator, measurement, sigma):
        data_grad, data_loss = operator.gradient(x, measurement)
        return -data_grad / self.tau ** 2 + (xt - x) / sigma ** 2 + self.prior_score, data_loss

    def update(self, x, score, lr, noise):
        if self.mc_algo == "langevin":
            return x + lr * score + np.sqrt(2 * lr) * noise
        self.velocity = self.momentum * self.velocity + np.sqrt(lr) * score + np.sqrt(2 * (1 - self.momentum)) * noise
        return x + np.sqrt(lr) * self.velocity

    def sample(self, xt, x0hat, operator, measurement, sigma, ratio, record=False):
        lr = self.get_lr(ratio)
        self.prior_score = (x0hat - xt).detach() / sigma ** 2
        self.velocity = torch.randn_like(x0hat) if self.mc_algo == "hmc" else None
        self.trajectory = []
        x = x0hat.clone().detach()
        for _ in range(self.num_steps):
            score, loss = self.score(x, xt, operator, measurement, sigma)
            x = self.update(x, score, lr, torch.randn_like(x))
            if torch.isnan(x).any():
                return torch.zeros_like(x)
            if record:
                self.trajectory.append(loss.sqrt().mean().item())
        return x.detach()


@torch.no_grad()
def reverse_ode(net, xt, sigma, steps=5, sigma_min=0.002, rho=7.0):
    ramp = np.linspace(0, 1, steps + 1)
    sigmas = (sigma ** (1 / rho) + ramp * (sigma_min ** (1 / rho) - sigma ** (1 / rho))) ** rho
    x = xt
    for s, s_next in zip(sigmas[:-1], sigmas[1:]):
        x = x + (s_next - s) * (x - net.denoise(x, s)) / s
    return x


def daps(net, operator, measurement, annealing_steps=100, sigma_max=80.0, sigma_min=0.1):
    sigmas = np.geomspace(sigma_max, sigma_min, annealing_steps + 1)
    mcmc = MCMCSampler()
    xt = torch.randn_like(measurement) * sigmas[0]
    for step in range(annealing_steps):
        x0hat = reverse_ode(net, xt, float(sigmas[step]))
        x0y = mcmc.sample(xt, x0hat, operator, measurement, float(sigmas[step]), step / annealing_steps)
        xt = x0y + torch.randn_like(x0y) * float(sigmas[step + 1])
    return xt


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    net = ScoreNet().to(device).eval().requires_grad_(False)
    op = Deblur(device=device)
    for i in range(50):
        clean = torch.rand(4, 3, 128, 128, device=device) * 2 - 1
        restored = daps(net, op, op.blur(clean))
        print(i, float(((restored - clean) ** 2).mean()))
