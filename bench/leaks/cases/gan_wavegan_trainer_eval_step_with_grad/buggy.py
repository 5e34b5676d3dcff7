"""Parallel WaveGAN vocoder trainer: the periodic evaluation epoch runs the generator and discriminator with autograd on

Source: https://github.com/kan-bayashi/ParallelWaveGAN/issues/1
Source: https://github.com/kan-bayashi/ParallelWaveGAN/pull/26
Style: gan
Kind: evaluation forward records a graph nobody uses: _eval_epoch() calls _eval_step() without torch.no_grad(), so every dev batch builds the generator's (and discriminator's) autograd graph; memory use jumps when training reaches the first evaluation and the run dies with CUDA out of memory at step 1000 (fixed by wrapping the eval step in torch.no_grad())
"""
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

HOP = 256


class WaveNetLikeGenerator(nn.Module):
    def __init__(self, aux_channels=80, channels=64, layers=30):
        super().__init__()
        self.upsample = nn.Upsample(scale_factor=HOP, mode="nearest")
        self.first = nn.Conv1d(1, channels, 1)
        self.convs = nn.ModuleList([nn.Conv1d(channels, 2 * channels, 3, padding=2 ** (i % 10), dilation=2 ** (i % 10))
                                    for i in range(layers)])
        self.aux = nn.ModuleList([nn.Conv1d(aux_channels, 2 * channels, 1) for _ in range(layers)])
        self.last = nn.Sequential(nn.ReLU(), nn.Conv1d(channels, 1, 1))

    def forward(self, z, c):
        c = self.upsample(c)
        x, skips = self.first(z), 0
        for conv, aux in zip(self.convs, self.aux):
            a, b = (conv(x) + aux(c)).chunk(2, dim=1)
            h = torch.tanh(a) * torch.sigmoid(b)
            skips = skips + h
            x = x + h
        return self.last(skips)


class Discriminator(nn.Module):
    def __init__(self, channels=64, layers=10):
        super().__init__()
        mods = [nn.Conv1d(1, channels, 3, padding=1), nn.LeakyReLU(0.2)]
        for i in range(1, layers - 1):
            mods += [nn.Conv1d(channels, channels, 3, padding=i, dilation=i), nn.LeakyReLU(0.2)]
        mods.append(nn.Conv1d(channels, 1, 3, padding=1))
        self.net = nn.Sequential(*mods)

    def forward(self, x):
        return self.net(x)


def stft_loss(y_hat, y, n_fft=1024):
    window = torch.hann_window(n_fft, device=y.device)
    s_hat = torch.stft(y_hat.squeeze(1), n_fft, 256, window=window, return_complex=True).abs()
    s = torch.stft(y.squeeze(1), n_fft, 256, window=window, return_complex=True).abs()
    sc = torch.norm(s - s_hat, p="fro") / torch.norm(s, p="fro")
    mag = F.l1_loss(torch.log(s.clamp(min=1e-7)), torch.log(s_hat.clamp(min=1e-7)))
    return sc, mag


class Trainer:
    def __init__(self, model, optimizer, loaders, device, eval_interval=1000, lambda_adv=4.0):
        self.model, self.optimizer, self.loaders, self.device = model, optimizer, loaders, device
        self.eval_interval, self.lambda_adv = eval_interval, lambda_adv
        self.steps = 0
        self.total_eval_loss = defaultdict(float)

    def _train_step(self, batch):
        z, c, y = (t.to(self.device) for t in batch)
        y_ = self.model["generator"](z, c)
        sc, mag = stft_loss(y_, y)
        p_ = self.model["discriminator"](y_)
        gen_loss = sc + mag + self.lambda_adv * F.mse_loss(p_, torch.ones_like(p_))
        self.optimizer["generator"].zero_grad()
        gen_loss.backward()
        self.optimizer["generator"].step()
        p, p_ = self.model["discriminator"](y), self.model["discriminator"](y_.detach())
        dis_loss = F.mse_loss(p, torch.ones_like(p)) + F.mse_loss(p_, torch.zeros_like(p_))
        self.optimizer["discriminator"].zero_grad()
        dis_loss.backward()
        self.optimizer["discriminator"].step()

    def _eval_step(self, batch):
        z, c, y = (t.to(self.device) for t in batch)
        y_ = self.model["generator"](z, c)  # leak: LL201
        p_ = self.model["discriminator"](y_)  # leak: LL201
        sc, mag = stft_loss(y_, y)
        adv_loss = F.mse_loss(p_, torch.ones_like(p_))
        p = self.model["discriminator"](y)  # leak: LL201
        self.total_eval_loss["eval/adversarial_loss"] += adv_loss.item()
        self.total_eval_loss["eval/spectral_convergence_loss"] += sc.item()
        self.total_eval_loss["eval/log_stft_magnitude_loss"] += mag.item()
        self.total_eval_loss["eval/discriminator_loss"] += (F.mse_loss(p, torch.ones_like(p))
                                                            + F.mse_loss(p_, torch.zeros_like(p_))).item()

    def _eval_epoch(self):
        for key in self.model:
            self.model[key].eval()
        for n, batch in enumerate(self.loaders["dev"], 1):
            self._eval_step(batch)
            if n == 1:
                self._save_intermediate_result(batch)
        for key, value in self.total_eval_loss.items():
            print(f"(steps: {self.steps}) {key} = {value / n:.4f}")
        self.total_eval_loss = defaultdict(float)
        for key in self.model:
            self.model[key].train()

    @torch.no_grad()
    def _save_intermediate_result(self, batch):
        z, c, y = (t.to(self.device) for t in batch)
        y_ = self.model["generator"](z, c)
        fig = plt.figure(figsize=(8, 6))
        plt.subplot(2, 1, 1)
        plt.plot(y[0, 0].cpu().numpy())
        plt.subplot(2, 1, 2)
        plt.plot(y_[0, 0].cpu().numpy())
        plt.savefig(f"{self.steps}steps.png")
        plt.close(fig)

    def run(self, max_steps):
        while self.steps < max_steps:
            for batch in self.loaders["train"]:
                self._train_step(batch)
                self.steps += 1
                if self.steps % self.eval_interval == 0:
                    self._eval_epoch()


def make_loader(n, frames=32, shuffle=False):
    c = torch.randn(n, 80, frames)
    return DataLoader(TensorDataset(torch.randn(n, 1, frames * HOP), c, torch.randn(n, 1, frames * HOP).tanh()),
                      batch_size=6, shuffle=shuffle)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = {"generator": WaveNetLikeGenerator().to(device), "discriminator": Discriminator().to(device)}
    optimizer = {"generator": torch.optim.RAdam(model["generator"].parameters(), lr=1e-4),
                 "discriminator": torch.optim.RAdam(model["discriminator"].parameters(), lr=5e-5)}
    Trainer(model, optimizer, {"train": make_loader(600, shuffle=True), "dev": make_loader(60, frames=400)},
            device).run(max_steps=400_000)
