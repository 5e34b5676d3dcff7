"""A StarGAN-style solver translates a fixed batch every few hundred steps with autograd recording

Source: http://39.103.169.235/p/f1bd4ff84926
Style: gan
Kind: periodic sampling inside the training loop records graphs nobody uses
"""
import torch
import torch.nn as nn
from torchvision.utils import save_image


class Generator(nn.Module):
    def __init__(self, c_dim=5, conv_dim=64):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3 + c_dim, conv_dim, 7, 1, 3), nn.InstanceNorm2d(conv_dim), nn.ReLU(True),
                                 nn.Conv2d(conv_dim, 3, 7, 1, 3), nn.Tanh())

    def forward(self, x, c):
        c = c.view(c.size(0), c.size(1), 1, 1).repeat(1, 1, x.size(2), x.size(3))
        return self.net(torch.cat([x, c], dim=1))


class Solver:
    def __init__(self, c_dim=5, sample_step=500):
        self.G = Generator(c_dim)
        self.D = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.01), nn.Conv2d(64, 1 + c_dim, 4, 2, 1))
        self.g_opt = torch.optim.Adam(self.G.parameters(), 1e-4, betas=(0.5, 0.999))
        self.c_dim, self.sample_step = c_dim, sample_step

    def train(self, num_iters=200_000):
        x_fixed = torch.rand(16, 3, 128, 128)
        c_fixed_list = [torch.eye(self.c_dim)[i].repeat(16, 1) for i in range(self.c_dim)]
        for i in range(num_iters):
            real = torch.rand(16, 3, 128, 128)
            target = torch.eye(self.c_dim)[torch.randint(0, self.c_dim, (16,))]
            fake = self.G(real, target)
            out = self.D(fake)
            g_loss = -out[:, :1].mean() + nn.functional.binary_cross_entropy_with_logits(out[:, 1:].mean((2, 3)), target)
            g_loss = g_loss + 10 * (self.G(fake, torch.zeros_like(target)) - real).abs().mean()
            self.g_opt.zero_grad()
            g_loss.backward()
            self.g_opt.step()
            if (i + 1) % self.sample_step == 0:
                x_fake_list = [x_fixed]
                with torch.no_grad():
                    for c_fixed in c_fixed_list:
                        x_fake_list.append(self.G(x_fixed, c_fixed))
                save_image((torch.cat(x_fake_list, dim=3) + 1) / 2, f"samples/{i + 1}-images.jpg", nrow=1)


if __name__ == "__main__":
    Solver().train()
