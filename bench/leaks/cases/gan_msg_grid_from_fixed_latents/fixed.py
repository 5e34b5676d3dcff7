"""A multi-scale GAN writes image grids from a fixed latent batch during training without no_grad

Source: https://github.com/akanimax/msg-gan-v1/issues/2
Style: gan
Kind: periodic sampling inside the training loop records graphs nobody uses
"""
import os

import torch
import torch.nn as nn
from torchvision.utils import save_image


class MSGGenerator(nn.Module):
    def __init__(self, latent=512, depth=6):
        super().__init__()
        self.initial = nn.Sequential(nn.ConvTranspose2d(latent, 256, 4), nn.LeakyReLU(0.2))
        self.blocks = nn.ModuleList([nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(256, 256, 3, padding=1), nn.LeakyReLU(0.2))
                                     for _ in range(depth - 1)])
        self.to_rgb = nn.ModuleList([nn.Conv2d(256, 3, 1) for _ in range(depth)])

    def forward(self, z):
        y = self.initial(z.view(z.shape[0], -1, 1, 1))
        outputs = [self.to_rgb[0](y)]
        for block, rgb in zip(self.blocks, self.to_rgb[1:]):
            y = block(y)
            outputs.append(rgb(y))
        return outputs


class MSG_GAN:
    def __init__(self, latent=512):
        self.gen = MSGGenerator(latent)
        self.dis = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 1))
        self.gen_optim = torch.optim.Adam(self.gen.parameters(), lr=3e-4, betas=(0, 0.99))
        self.latent = latent

    @staticmethod
    def create_grid(samples, img_files):
        samples = [torch.clamp((s.detach() / 2) + 0.5, 0, 1) for s in samples]
        for sample, img_file in zip(samples, img_files):
            save_image(sample, img_file, nrow=int(sample.shape[0] ** 0.5))

    def train(self, epochs=100, steps_per_epoch=1000, feedback_factor=10, sample_dir="samples"):
        fixed_input = torch.randn(64, self.latent)
        for epoch in range(epochs):
            for i in range(steps_per_epoch):
                fakes = self.gen(torch.randn(16, self.latent))
                gen_loss = -self.dis(fakes[-1]).mean()
                self.gen_optim.zero_grad()
                gen_loss.backward()
                self.gen_optim.step()
                if i % (steps_per_epoch // feedback_factor) == 0:
                    gen_img_files = [os.path.join(sample_dir, f"{r}_{epoch}_{i}.png") for r in range(6)]
                    with torch.no_grad():
                        self.create_grid(self.gen(fixed_input), gen_img_files)


if __name__ == "__main__":
    MSG_GAN().train()
