"""Unconditional GAN training with a periodic FID hook: fake images are generated and fed to Inception with autograd on

Source: https://github.com/open-mmlab/mmgeneration/pull/2
Style: gan
Kind: evaluation forward records a graph nobody uses: every `interval` iterations the eval hook samples 50k images batch by batch from the generator and pushes them through the Inception feature extractor without torch.no_grad(); the features it keeps carry the generator and Inception graphs, so host and device memory balloon during evaluation and the job is killed without an error (fix: run the evaluation under no_grad)
"""
import numpy as np
import torch
import torch.nn.functional as F
from scipy import linalg


class FID:
    def __init__(self, inception, real_stats_path, num_images=50000):
        self.inception = inception
        stats = np.load(real_stats_path)
        self.real_mu, self.real_sigma = stats["mu"], stats["sigma"]
        self.num_images = num_images
        self.feats = []

    def feed(self, images):
        images = F.interpolate((images + 1) / 2, size=(299, 299), mode="bilinear", align_corners=False)
        self.feats.append(self.inception(images))
        return sum(f.shape[0] for f in self.feats)

    def summary(self):
        feats = torch.cat(self.feats).double().cpu().numpy()
        self.feats.clear()
        mu, sigma = feats.mean(0), np.cov(feats, rowvar=False)
        covmean, _ = linalg.sqrtm(sigma.dot(self.real_sigma), disp=False)
        diff = mu - self.real_mu
        return float(diff.dot(diff) + np.trace(sigma) + np.trace(self.real_sigma) - 2 * np.trace(covmean.real))


class EvalHook:
    def __init__(self, metric, interval=10000, batch_size=64, latent_dim=512):
        self.metric, self.interval = metric, interval
        self.batch_size, self.latent_dim = batch_size, latent_dim

    def after_train_iter(self, it, generator, device):
        if (it + 1) % self.interval:
            return None
        generator.eval()
        seen = 0
        with torch.no_grad():
            while seen < self.metric.num_images:
                noise = torch.randn(self.batch_size, self.latent_dim, device=device)
                seen = self.metric.feed(generator(noise))
            score = self.metric.summary()
        generator.train()
        return score


def train(generator, discriminator, loader, hook, iters=800000, device="cuda"):
    g_opt = torch.optim.Adam(generator.parameters(), lr=2e-3, betas=(0.0, 0.99))
    d_opt = torch.optim.Adam(discriminator.parameters(), lr=2e-3, betas=(0.0, 0.99))
    data = iter(loader)
    for it in range(iters):
        try:
            real = next(data).to(device)
        except StopIteration:
            data = iter(loader)
            real = next(data).to(device)
        z = torch.randn(real.shape[0], hook.latent_dim, device=device)
        fake = generator(z)
        d_loss = F.softplus(discriminator(fake.detach())).mean() + F.softplus(-discriminator(real)).mean()
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()
        g_loss = F.softplus(-discriminator(fake)).mean()
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()
        fid = hook.after_train_iter(it, generator, device)
        if fid is not None:
            print(f"iter {it + 1}: FID {fid:.2f}")
