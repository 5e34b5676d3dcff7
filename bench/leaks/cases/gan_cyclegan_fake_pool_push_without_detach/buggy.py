"""CycleGAN: generated images go into the discriminator's history buffer with their generator graph

Source: https://github.com/eriklindernoren/PyTorch-GAN/issues/71
Style: gan
Kind: graph kept across steps in a history buffer: `push_and_pop(fake_A)` stores the generator outputs themselves (graph attached) and the discriminator step detaches only what the buffer returns, so each of the up to 50 stored images per buffer keeps the generator forward of the step that produced it alive on the GPU
"""
import itertools
import random

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from cyclegan_models import Discriminator, GeneratorResNet, UnpairedImageDataset


class HistoryBuffer:
    def __init__(self, max_size=50):
        self.max_size = max_size
        self.data = []

    def push_and_pop(self, images):
        out = []
        for img in images:
            img = img.unsqueeze(0)
            if len(self.data) < self.max_size:
                self.data.append(img)
                out.append(img)
            elif random.uniform(0, 1) > 0.5:
                i = random.randint(0, self.max_size - 1)
                out.append(self.data[i].clone())
                self.data[i] = img
            else:
                out.append(img)
        return torch.cat(out)


def main(epochs=200, decay_epoch=100, lambda_cyc=10.0, lambda_id=5.0, device="cuda"):
    G_AB, G_BA = GeneratorResNet(res_blocks=9).to(device), GeneratorResNet(res_blocks=9).to(device)
    D_A, D_B = Discriminator().to(device), Discriminator().to(device)
    gan_loss, cycle_loss, identity_loss = nn.MSELoss(), nn.L1Loss(), nn.L1Loss()
    opt_G = torch.optim.Adam(itertools.chain(G_AB.parameters(), G_BA.parameters()), lr=2e-4, betas=(0.5, 0.999))
    opt_DA = torch.optim.Adam(D_A.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_DB = torch.optim.Adam(D_B.parameters(), lr=2e-4, betas=(0.5, 0.999))
    fake_A_buffer, fake_B_buffer = HistoryBuffer(), HistoryBuffer()
    loader = DataLoader(UnpairedImageDataset("data/monet2photo", size=256), batch_size=1, shuffle=True, num_workers=4)

    for epoch in range(epochs):
        for i, batch in enumerate(loader):
            real_A, real_B = batch["A"].to(device), batch["B"].to(device)
            valid = torch.ones((real_A.size(0), *D_A.output_shape), device=device)
            fake = torch.zeros_like(valid)

            opt_G.zero_grad()
            loss_id = (identity_loss(G_BA(real_A), real_A) + identity_loss(G_AB(real_B), real_B)) / 2
            fake_B = G_AB(real_A)
            fake_A = G_BA(real_B)
            loss_gan = (gan_loss(D_B(fake_B), valid) + gan_loss(D_A(fake_A), valid)) / 2
            loss_cycle = (cycle_loss(G_BA(fake_B), real_A) + cycle_loss(G_AB(fake_A), real_B)) / 2
            loss_G = loss_gan + lambda_cyc * loss_cycle + lambda_id * loss_id
            loss_G.backward()
            opt_G.step()

            opt_DA.zero_grad()
            fake_A_ = fake_A_buffer.push_and_pop(fake_A)  # leak: LL102
            loss_DA = (gan_loss(D_A(real_A), valid) + gan_loss(D_A(fake_A_.detach()), fake)) / 2
            loss_DA.backward()
            opt_DA.step()

            opt_DB.zero_grad()
            fake_B_ = fake_B_buffer.push_and_pop(fake_B)  # leak: LL102
            loss_DB = (gan_loss(D_B(real_B), valid) + gan_loss(D_B(fake_B_.detach()), fake)) / 2
            loss_DB.backward()
            opt_DB.step()

            if i % 100 == 0:
                print(f"[{epoch}/{epochs}][{i}/{len(loader)}] D {(loss_DA + loss_DB).item() / 2:.4f} "
                      f"G {loss_G.item():.4f} adv {loss_gan.item():.4f} cyc {loss_cycle.item():.4f}")
        if epoch >= decay_epoch:
            for opt in (opt_G, opt_DA, opt_DB):
                for group in opt.param_groups:
                    group["lr"] = 2e-4 * (1.0 - (epoch - decay_epoch) / (epochs - decay_epoch))
        torch.save({"G_AB": G_AB.state_dict(), "G_BA": G_BA.state_dict()}, f"saved_models/cyclegan_{epoch}.pth")


if __name__ == "__main__":
    main()
