"""WGAN-GP on face crops: critic and generator losses summed into epoch totals as tensors

Source: https://github.com/pytorch/pytorch/issues/64586
Style: gan
Kind: loss accumulated across steps with its graph: the epoch totals `d_total += d_loss` and `g_total += g_loss` keep every step's graph, including the create_graph=True gradient-penalty graph, until the epoch ends; memory grows every epoch until CUDA OOM
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

LATENT = 128


class Generator(nn.Module):
    def __init__(self, ch=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(LATENT, ch * 8, 4, 1, 0), nn.BatchNorm2d(ch * 8), nn.ReLU(True),
            nn.ConvTranspose2d(ch * 8, ch * 4, 4, 2, 1), nn.BatchNorm2d(ch * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ch * 4, ch * 2, 4, 2, 1), nn.BatchNorm2d(ch * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ch * 2, 3, 4, 2, 1), nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z.view(z.size(0), LATENT, 1, 1))


class Critic(nn.Module):
    def __init__(self, ch=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, ch, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ch, ch * 2, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ch * 2, ch * 4, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ch * 4, 1, 4, 1, 0),
        )

    def forward(self, x):
        return self.net(x).view(-1)


def gradient_penalty(critic, real, fake):
    eps = torch.rand(real.size(0), 1, 1, 1, device=real.device)
    mixed = (eps * real + (1 - eps) * fake).requires_grad_(True)
    scores = critic(mixed)
    grads, = torch.autograd.grad(scores.sum(), mixed, create_graph=True)
    return ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()


def train(dataset, epochs=200, n_critic=5, gp_weight=10.0, device="cuda"):
    gen, critic = Generator().to(device), Critic().to(device)
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4, betas=(0.0, 0.9))
    opt_d = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))
    loader = DataLoader(dataset, batch_size=64, shuffle=True, drop_last=True, num_workers=4)
    for epoch in range(epochs):
        d_total, g_total, g_steps = 0.0, 0.0, 0
        for i, (real, _) in enumerate(loader):
            real = real.to(device)
            z = torch.randn(real.size(0), LATENT, device=device)
            fake = gen(z).detach()
            d_loss = critic(fake).mean() - critic(real).mean() + gp_weight * gradient_penalty(critic, real, fake)
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()
            d_total += d_loss  # leak: LL101
            if i % n_critic == 0:
                z = torch.randn(real.size(0), LATENT, device=device)
                g_loss = -critic(gen(z)).mean()
                opt_g.zero_grad()
                g_loss.backward()
                opt_g.step()
                g_total += g_loss  # leak: LL101
                g_steps += 1
        print(f"epoch {epoch}: critic {float(d_total) / len(loader):.4f} gen {float(g_total) / max(g_steps, 1):.4f}")
        torch.save({"gen": gen.state_dict(), "critic": critic.state_dict()}, f"wgangp_{epoch:03d}.pt")
