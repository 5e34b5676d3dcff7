"""Multi-scale GAN vocoder keeps each step's adversarial loss tensor in a per-epoch list for the progress bar average

Source: https://github.com/rishikksh20/VocGAN/pull/24
Style: gan
Kind: graph kept across steps in a list: avg_adv_loss gets the adversarial loss tensor (sum over discriminator scales plus feature matching) every step, so every step's generator/discriminator graph stays alive until the epoch ends
"""
import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F

SEGMENT = 8192
HOP = 256
N_MELS = 80


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = nn.Conv1d(N_MELS, 256, 7, padding=3)
        self.up = nn.Sequential(
            nn.ConvTranspose1d(256, 128, 16, stride=8, padding=4), nn.LeakyReLU(0.2),
            nn.ConvTranspose1d(128, 64, 16, stride=8, padding=4), nn.LeakyReLU(0.2),
            nn.ConvTranspose1d(64, 32, 8, stride=4, padding=2), nn.LeakyReLU(0.2),
        )
        self.post = nn.Conv1d(32, 1, 7, padding=3)

    def forward(self, mel):
        return torch.tanh(self.post(self.up(self.pre(mel))))


class ScaleDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([
            nn.Conv1d(1, 16, 15, padding=7),
            nn.Conv1d(16, 64, 41, stride=4, padding=20, groups=4),
            nn.Conv1d(64, 256, 41, stride=4, padding=20, groups=16),
        ])
        self.out = nn.Conv1d(256, 1, 3, padding=1)

    def forward(self, x):
        feats = []
        for layer in self.layers:
            x = F.leaky_relu(layer(x), 0.2)
            feats.append(x)
        return feats, self.out(x)


class MultiScaleDiscriminator(nn.Module):
    def __init__(self, scales=3):
        super().__init__()
        self.discs = nn.ModuleList([ScaleDiscriminator() for _ in range(scales)])
        self.pool = nn.AvgPool1d(4, stride=2, padding=1)

    def forward(self, audio):
        results = []
        for disc in self.discs:
            results.append(disc(audio))
            audio = self.pool(audio)
        return results


def train(loader, epochs=100, feat_match=10.0, lambda_adv=2.5, disc_start=2000):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model_g, model_d = Generator().to(device), MultiScaleDiscriminator().to(device)
    optim_g = torch.optim.Adam(model_g.parameters(), lr=1e-4, betas=(0.5, 0.9))
    optim_d = torch.optim.Adam(model_d.parameters(), lr=1e-4, betas=(0.5, 0.9))
    step = 0
    for epoch in range(epochs):
        avg_g_loss, avg_d_loss, avg_adv_loss = [], [], []
        for mel, audio in loader:
            mel, audio = mel.to(device), audio.to(device)
            optim_g.zero_grad()
            fake_audio = model_g(mel)[:, :, :SEGMENT]
            loss_g = F.l1_loss(fake_audio, audio)
            adv_loss = 0.0
            if step > disc_start:
                disc_fake, disc_real = model_d(fake_audio), model_d(audio)
                for _, score_fake in disc_fake:
                    adv_loss += F.mse_loss(score_fake, torch.ones_like(score_fake))
                adv_loss = adv_loss / len(disc_fake)
                for (feats_fake, _), (feats_real, _) in zip(disc_fake, disc_real):
                    for f_fake, f_real in zip(feats_fake, feats_real):
                        adv_loss += feat_match * torch.mean(torch.abs(f_fake - f_real))
                loss_g = loss_g + lambda_adv * adv_loss
            loss_g.backward()
            optim_g.step()

            loss_d_avg = 0.0
            if step > disc_start:
                optim_d.zero_grad()
                loss_d = 0.0
                for (_, s_fake), (_, s_real) in zip(model_d(fake_audio.detach()), model_d(audio)):
                    loss_d += F.mse_loss(s_real, torch.ones_like(s_real)) + F.mse_loss(s_fake, torch.zeros_like(s_fake))
                loss_d.backward()
                optim_d.step()
                loss_d_avg = loss_d.item()

            step += 1
            avg_g_loss.append(loss_g.item())
            avg_d_loss.append(loss_d_avg)
            avg_adv_loss.append(adv_loss.item() if torch.is_tensor(adv_loss) else adv_loss)
            if step % 100 == 0:
                print("epoch %d step %d | g %.4f d %.4f adv %.4f" % (
                    epoch, step, sum(avg_g_loss) / len(avg_g_loss), sum(avg_d_loss) / len(avg_d_loss),
                    sum(avg_adv_loss) / len(avg_adv_loss)))


def synthetic_loader(batches=500, batch_size=8):
    for _ in itertools.islice(itertools.count(), batches):
        mel = torch.randn(batch_size, N_MELS, SEGMENT // HOP)
        yield mel, torch.randn(batch_size, 1, SEGMENT).clamp(-1, 1)


if __name__ == "__main__":
    train(list(synthetic_loader()))
