"""CycleGAN in Lightning: PSNR/SSIM metric collection updated with the generator's graph-attached output every training step

Source: https://github.com/Lightning-AI/torchmetrics/issues/2597
Style: lightning
Kind: a torchmetrics collection updated every training step with `fake` still attached to the generator graph and never reset: its running states (and the values it returns) carry grad_fn, so each step's graph is chained into the metric state and GPU memory climbs until the run crashes
"""
import itertools

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchmetrics import MetricCollection
from torchmetrics.image import PeakSignalNoiseRatio, StructuralSimilarityIndexMeasure


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.InstanceNorm2d(cout), nn.ReLU(True))


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(conv_block(3, 64), conv_block(64, 64), nn.Conv2d(64, 3, 3, padding=1), nn.Tanh())

    def forward(self, x):
        return self.net(x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(64, 1, 4, 1, 1))

    def forward(self, x):
        return self.net(x)


class CycleGAN(pl.LightningModule):
    def __init__(self, lam=10.0, lr=2e-4):
        super().__init__()
        self.automatic_optimization = False
        self.g_ab, self.g_ba = Generator(), Generator()
        self.d_a, self.d_b = Discriminator(), Discriminator()
        self.lam, self.lr = lam, lr
        self.train_metrics = MetricCollection({"PSNR": PeakSignalNoiseRatio(data_range=2.0),
                                               "SSIM": StructuralSimilarityIndexMeasure(data_range=2.0)})
        self.valid_metrics = self.train_metrics.clone(prefix="val_")

    def training_step(self, batch, batch_idx):
        real_a, real_b = batch
        opt_g, opt_d = self.optimizers()
        fake_b, fake_a = self.g_ab(real_a), self.g_ba(real_b)
        rec_a, rec_b = self.g_ba(fake_b), self.g_ab(fake_a)
        pred_fb, pred_fa = self.d_b(fake_b), self.d_a(fake_a)
        g_loss = (F.mse_loss(pred_fb, torch.ones_like(pred_fb)) + F.mse_loss(pred_fa, torch.ones_like(pred_fa))
                  + self.lam * (F.l1_loss(rec_a, real_a) + F.l1_loss(rec_b, real_b)))
        opt_g.zero_grad()
        self.manual_backward(g_loss)
        opt_g.step()
        d_loss = 0.0
        for disc, real, fake in ((self.d_b, real_b, fake_b), (self.d_a, real_a, fake_a)):
            p_real, p_fake = disc(real), disc(fake.detach())
            d_loss = d_loss + F.mse_loss(p_real, torch.ones_like(p_real)) + F.mse_loss(p_fake, torch.zeros_like(p_fake))
        opt_d.zero_grad()
        self.manual_backward(d_loss)
        opt_d.step()
        train_metrics = self.train_metrics(fake_b.detach(), real_b)
        self.log_dict({"g_loss": g_loss.detach(), "d_loss": d_loss.detach(), **train_metrics}, prog_bar=True)

    def validation_step(self, batch, batch_idx):
        real_a, real_b = batch
        fake_b = self.g_ab(real_a)
        self.log_dict(self.valid_metrics(fake_b, real_b))

    def configure_optimizers(self):
        opt_g = torch.optim.Adam(itertools.chain(self.g_ab.parameters(), self.g_ba.parameters()), self.lr, betas=(0.5, 0.999))
        opt_d = torch.optim.Adam(itertools.chain(self.d_a.parameters(), self.d_b.parameters()), self.lr, betas=(0.5, 0.999))
        return opt_g, opt_d


def main(train_loader, val_loader, epochs=200):
    trainer = pl.Trainer(max_epochs=epochs, accelerator="gpu", devices=1)
    trainer.fit(CycleGAN(), train_loader, val_loader)
