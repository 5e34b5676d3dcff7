"""Multi-scale GAN: the generator's outputs are detached before the discriminator step, so D's backward never enters G

Source: https://github.com/akanimax/msg-gan-v1/issues/4
Style: gan
Kind: negative: generator outputs fed to the discriminator step (detached; the generator graph of that forward is freed when the step ends)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MSGGenerator(nn.Module):
    def __init__(self, z_dim=128):
        super().__init__()
        self.fc = nn.Linear(z_dim, 256 * 4 * 4)
        self.blocks = nn.ModuleList(nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(256, 256, 3, padding=1), nn.LeakyReLU(0.2))
                                    for _ in range(4))
        self.to_rgb = nn.ModuleList(nn.Conv2d(256, 3, 1) for _ in range(5))

    def forward(self, z):
        h = self.fc(z).view(-1, 256, 4, 4)
        outs = [torch.tanh(self.to_rgb[0](h))]
        for block, rgb in zip(self.blocks, self.to_rgb[1:]):
            h = block(h)
            outs.append(torch.tanh(rgb(h)))
        return outs


class MSGDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.from_rgb = nn.ModuleList(nn.Conv2d(3, 128, 1) for _ in range(5))
        self.blocks = nn.ModuleList(nn.Sequential(nn.Conv2d(128 if i == 0 else 256, 128, 3, padding=1), nn.LeakyReLU(0.2), nn.AvgPool2d(2))
                                    for i in range(4))
        self.final = nn.Linear(128 * 4 * 4 + 128, 1)

    def forward(self, images):
        h = self.from_rgb[-1](images[-1])
        for i, block in enumerate(self.blocks):
            h = torch.cat([block(h), self.from_rgb[-2 - i](images[-2 - i])], dim=1) if i < 3 else block(h)
        return self.final(torch.cat([h.flatten(1), self.from_rgb[0](images[0]).mean((2, 3))], 1))


def multiscale(real):
    return [F.avg_pool2d(real, 2 ** k) for k in range(4, -1, -1)]


def train(iterations=100_000, batch=32, device="cuda" if torch.cuda.is_available() else "cpu"):
    gen, dis = MSGGenerator().to(device), MSGDiscriminator().to(device)
    g_opt = torch.optim.Adam(gen.parameters(), 3e-3, betas=(0, 0.99))
    d_opt = torch.optim.Adam(dis.parameters(), 3e-3, betas=(0, 0.99))
    for it in range(iterations):
        real = multiscale(torch.rand(batch, 3, 64, 64, device=device) * 2 - 1)
        fake = [f.detach() for f in gen(torch.randn(batch, 128, device=device))]
        d_loss = F.relu(1 - dis(real)).mean() + F.relu(1 + dis(fake)).mean()
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()
        g_loss = -dis(gen(torch.randn(batch, 128, device=device))).mean()
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()
        if it % 500 == 0:
            print(it, d_loss.item(), g_loss.item())


if __name__ == "__main__":
    train()
