"""A CycleGAN model keeps generated images and losses as attributes for the visualizer, graphs included

Source: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/issues/139
Style: gan
Kind: a trainer keeping the last outputs and losses on self (graph alive into the next step)
"""
from collections import OrderedDict

import torch
import torch.nn as nn


class CycleGANModel:
    def __init__(self):
        self.netG_A = nn.Sequential(nn.Conv2d(3, 64, 7, padding=3), nn.ReLU(), nn.Conv2d(64, 3, 7, padding=3), nn.Tanh())
        self.netG_B = nn.Sequential(nn.Conv2d(3, 64, 7, padding=3), nn.ReLU(), nn.Conv2d(64, 3, 7, padding=3), nn.Tanh())
        self.netD_B = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(64, 1, 4, 1, 1))
        params = list(self.netG_A.parameters()) + list(self.netG_B.parameters())
        self.optimizer_G = torch.optim.Adam(params, lr=2e-4, betas=(0.5, 0.999))

    def set_input(self, real_A, real_B):
        self.real_A, self.real_B = real_A, real_B

    def backward_G(self, lambda_cycle=10.0):
        fake_B = self.netG_A(self.real_A)
        pred_fake = self.netD_B(fake_B)
        loss_G_A = nn.functional.mse_loss(pred_fake, torch.ones_like(pred_fake))
        rec_A = self.netG_B(fake_B)
        loss_cycle_A = nn.functional.l1_loss(rec_A, self.real_A) * lambda_cycle
        loss_G = loss_G_A + loss_cycle_A
        loss_G.backward()
        self.fake_B = fake_B.detach()
        self.rec_A = rec_A.detach()
        self.loss_G_A = loss_G_A.item()
        self.loss_cycle_A = loss_cycle_A.item()

    def optimize_parameters(self):
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()

    def get_current_visuals(self):
        return OrderedDict(real_A=self.real_A, fake_B=self.fake_B, rec_A=self.rec_A)

    def get_current_errors(self):
        return OrderedDict(G_A=float(self.loss_G_A), Cyc_A=float(self.loss_cycle_A))


if __name__ == "__main__":
    model = CycleGANModel()
    for step in range(100_000):
        model.set_input(torch.rand(1, 3, 256, 256), torch.rand(1, 3, 256, 256))
        model.optimize_parameters()
        if step % 100 == 0:
            print(step, model.get_current_errors())
