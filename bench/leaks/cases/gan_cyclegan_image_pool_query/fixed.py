"""The discriminator's history pool stores generated images together with the generator's graph

Source: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/pull/141
Style: gan
Kind: a custom image pool whose method stores graph-attached tensors across steps
"""
import random

import torch
import torch.nn as nn


class ImagePool:
    """History of generated images (Shrivastava et al.): the discriminator sees old fakes too."""

    def __init__(self, pool_size=50):
        self.pool_size = pool_size
        self.images = []

    def query(self, images):
        returned = []
        for image in images:
            image = image.unsqueeze(0)
            if len(self.images) < self.pool_size:
                self.images.append(image)
                returned.append(image)
            elif random.uniform(0, 1) > 0.5:
                idx = random.randint(0, self.pool_size - 1)
                returned.append(self.images[idx].clone())
                self.images[idx] = image
            else:
                returned.append(image)
        return torch.cat(returned, 0)


def resnet_generator():
    return nn.Sequential(nn.Conv2d(3, 64, 7, padding=3), nn.InstanceNorm2d(64), nn.ReLU(True), nn.Conv2d(64, 3, 7, padding=3), nn.Tanh())


def patch_discriminator():
    return nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2, True), nn.Conv2d(64, 1, 4, 1, 1))


def train(iterations=200_000):
    netG_A, netG_B = resnet_generator(), resnet_generator()
    netD_A, netD_B = patch_discriminator(), patch_discriminator()
    opt_G = torch.optim.Adam(list(netG_A.parameters()) + list(netG_B.parameters()), lr=2e-4, betas=(0.5, 0.999))
    opt_D = torch.optim.Adam(list(netD_A.parameters()) + list(netD_B.parameters()), lr=2e-4, betas=(0.5, 0.999))
    fake_A_pool, fake_B_pool = ImagePool(), ImagePool()
    mse, l1 = nn.MSELoss(), nn.L1Loss()
    for it in range(iterations):
        real_A, real_B = torch.rand(1, 3, 256, 256), torch.rand(1, 3, 256, 256)
        fake_B, fake_A = netG_A(real_A), netG_B(real_B)
        loss_G = mse(netD_A(fake_B), torch.ones(1, 1, 63, 63)) + mse(netD_B(fake_A), torch.ones(1, 1, 63, 63))
        loss_G = loss_G + 10 * (l1(netG_B(fake_B), real_A) + l1(netG_A(fake_A), real_B))
        opt_G.zero_grad()
        loss_G.backward()
        opt_G.step()
        pooled_B = fake_B_pool.query(fake_B.detach())
        pooled_A = fake_A_pool.query(fake_A.detach())
        loss_D = mse(netD_A(real_B), torch.ones(1, 1, 63, 63)) + mse(netD_A(pooled_B.detach()), torch.zeros(1, 1, 63, 63))
        loss_D = loss_D + mse(netD_B(real_A), torch.ones(1, 1, 63, 63)) + mse(netD_B(pooled_A.detach()), torch.zeros(1, 1, 63, 63))
        opt_D.zero_grad()
        (0.5 * loss_D).backward()
        opt_D.step()


if __name__ == "__main__":
    train()
