"""The discriminator's image pool only ever receives detached generator outputs

Source: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/issues/512
Style: gan
Kind: negative: a custom image pool whose method keeps tensors across steps (detached)
"""
import random

import torch
import torch.nn as nn


class ImagePool:
    def __init__(self, pool_size=50):
        self.pool_size, self.images = pool_size, []

    def query(self, images):
        out = []
        for image in images:
            image = image.unsqueeze(0)
            if len(self.images) < self.pool_size:
                self.images.append(image)
                out.append(image)
            elif random.random() > 0.5:
                idx = random.randrange(self.pool_size)
                out.append(self.images[idx].clone())
                self.images[idx] = image
            else:
                out.append(image)
        return torch.cat(out, 0)


if __name__ == "__main__":
    netG = nn.Sequential(nn.Conv2d(3, 64, 7, padding=3), nn.ReLU(), nn.Conv2d(64, 3, 7, padding=3), nn.Tanh())
    netD = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(64, 1, 4, 1, 1))
    opt_G = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_D = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    pool = ImagePool()
    for step in range(200_000):
        real_A, real_B = torch.rand(1, 3, 256, 256), torch.rand(1, 3, 256, 256)
        fake_B = netG(real_A)
        pred = netD(fake_B)
        loss_G = nn.functional.mse_loss(pred, torch.ones_like(pred)) + 10 * nn.functional.l1_loss(fake_B, real_A)
        opt_G.zero_grad()
        loss_G.backward()
        opt_G.step()
        pooled = pool.query(fake_B.detach())
        pred_real, pred_fake = netD(real_B), netD(pooled)
        loss_D = 0.5 * (nn.functional.mse_loss(pred_real, torch.ones_like(pred_real)) + nn.functional.mse_loss(pred_fake, torch.zeros_like(pred_fake)))
        opt_D.zero_grad()
        loss_D.backward()
        opt_D.step()
