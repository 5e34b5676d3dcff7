"""A HiFi-GAN style vocoder trainer averages discriminator and generator losses by adding tensors to floats

Source: https://github.com/pytorch/pytorch/issues/144181
Style: gan
Kind: loss accumulated across steps with the graph
Runnable from: bench/leaks/cases/gan_vocoder_loss_averages_tensor_plus_float
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Generator(nn.Module):
    def __init__(self, mel=16):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(mel, 32, 7, padding=3), nn.LeakyReLU(0.1),
                                 nn.ConvTranspose1d(32, 16, 8, 4, 2), nn.LeakyReLU(0.1),
                                 nn.ConvTranspose1d(16, 1, 8, 4, 2), nn.Tanh())

    def forward(self, mel):
        return self.net(mel)


class MultiPeriodDiscriminator(nn.Module):
    def __init__(self, periods=(2, 3, 5)):
        super().__init__()
        self.periods = periods
        self.convs = nn.ModuleList([nn.Conv2d(1, 1, (5, 1), (3, 1), (2, 0)) for _ in periods])

    def forward(self, wav):
        outs = []
        for p, conv in zip(self.periods, self.convs):
            t = wav.shape[-1] // p * p
            outs.append(conv(wav[..., :t].view(wav.shape[0], 1, -1, p)))
        return outs


def train(epochs=1, steps=200):
    torch.manual_seed(0)
    gen, disc = Generator(), MultiPeriodDiscriminator()
    optim_g = torch.optim.AdamW(gen.parameters(), 2e-4, betas=(0.8, 0.99))
    optim_d = torch.optim.AdamW(disc.parameters(), 2e-4, betas=(0.8, 0.99))
    for epoch in range(epochs):
        epoch_disc_sum = 0.0
        epoch_gen_sum = 0.0
        for step in range(steps):
            mel, wav = torch.randn(4, 16, 16), torch.randn(4, 1, 16 * 16)
            y_hat = gen(mel)
            loss_disc = sum(F.mse_loss(r, torch.ones_like(r)) + F.mse_loss(f, torch.zeros_like(f))
                            for r, f in zip(disc(wav), disc(y_hat.detach())))
            optim_d.zero_grad()
            loss_disc.backward()
            optim_d.step()
            loss_gen = sum(F.mse_loss(f, torch.ones_like(f)) for f in disc(y_hat)) + 45 * F.l1_loss(y_hat, wav)
            optim_g.zero_grad()
            loss_gen.backward()
            optim_g.step()
            epoch_disc_sum += loss_disc.item()
            epoch_gen_sum += loss_gen.item()
        print(f"epoch {epoch}: disc {epoch_disc_sum / steps:.4f} gen {epoch_gen_sum / steps:.4f}")


if __name__ == "__main__":
    train()
