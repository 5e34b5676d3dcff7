"""f-AnoGAN stage 1 (WGAN-GP on normal images): discriminator and generator losses collected for the loss curves

Source: https://github.com/mulkong/f-AnoGAN_with_Pytorch/issues/3
Style: gan
Kind: graph kept across steps in lists: d_losses / g_losses get the loss tensors themselves every iteration, so each critic and generator step's graph (and the gradient-penalty double-backward graph) stays on the GPU for the whole run; GPU memory keeps growing (fixed by appending d_loss.item() / g_loss.item())
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

LATENT = 100
IMG = 64


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(LATENT, 256, 4, 1, 0), nn.BatchNorm2d(256), nn.ReLU(True),
            nn.ConvTranspose2d(256, 128, 4, 2, 1), nn.BatchNorm2d(128), nn.ReLU(True),
            nn.ConvTranspose2d(128, 64, 4, 2, 1), nn.BatchNorm2d(64), nn.ReLU(True),
            nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.BatchNorm2d(32), nn.ReLU(True),
            nn.ConvTranspose2d(32, 1, 4, 2, 1), nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z.view(-1, LATENT, 1, 1))


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(32, 64, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(64, 128, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(128, 256, 4, 2, 1), nn.LeakyReLU(0.2, True),
        )
        self.last = nn.Conv2d(256, 1, 4, 1, 0)

    def forward(self, x):
        return self.last(self.features(x)).view(-1)


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1, 1, 1, device=real.device)
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    grads = torch.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)[0]
    return ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()


def train_wgangp(loader, epochs=200, n_critic=5, lambda_gp=10.0, device="cuda"):
    G, D = Generator().to(device), Critic().to(device)
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    d_losses, g_losses = [], []
    for epoch in range(epochs):
        for i, (imgs,) in enumerate(loader):
            real = imgs.to(device)
            z = torch.randn(real.size(0), LATENT, device=device)

            opt_d.zero_grad()
            with torch.no_grad():
                fake = G(z)  # the critic step only needs the images
            d_loss = -D(real).mean() + D(fake.detach()).mean() + lambda_gp * gradient_penalty(D, real, fake.detach())
            d_loss.backward()
            opt_d.step()
            d_losses.append(d_loss.item())

            if i % n_critic == 0:
                opt_g.zero_grad()
                g_loss = -D(G(z)).mean()
                g_loss.backward()
                opt_g.step()
                g_losses.append(g_loss.item())

        print(f"[epoch {epoch}/{epochs}] D {float(d_losses[-1]):.4f} G {float(g_losses[-1]):.4f}")
        if epoch % 20 == 0:
            torch.save({"G": G.state_dict(), "D": D.state_dict()}, f"wgangp_{epoch:03d}.pt")
    return G, D, d_losses, g_losses


def plot_curves(d_losses, g_losses, path="wgangp_losses.png"):
    fig = plt.figure(figsize=(10, 4))
    plt.plot([float(v) for v in d_losses], label="critic")
    plt.plot([float(v) for v in g_losses], label="generator")
    plt.legend()
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":
    normal_images = torch.rand(6000, 1, IMG, IMG) * 2 - 1
    loader = DataLoader(TensorDataset(normal_images), batch_size=64, shuffle=True, drop_last=True)
    _, _, d_hist, g_hist = train_wgangp(loader)
    plot_curves(d_hist, g_hist)
