"""DCGAN training loop that records G and D losses every iteration and keeps fixed-noise sample grids for an animation

Source: https://pytorch.org/tutorials/beginner/dcgan_faces_tutorial.html
Style: gan
Kind: negative: resembles D/G losses and generator samples appended to lists every step with their graphs; the losses go in as Python floats (.item()) and the samples are generated under torch.no_grad(), detached and moved to the CPU
"""
import torch
import torch.nn as nn
import torchvision.utils as vutils
from torch.utils.data import DataLoader, TensorDataset

NZ, NGF, NDF = 100, 64, 64


def generator():
    return nn.Sequential(
        nn.ConvTranspose2d(NZ, NGF * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(NGF * 4), nn.ReLU(True),
        nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF * 2), nn.ReLU(True),
        nn.ConvTranspose2d(NGF * 2, NGF, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF), nn.ReLU(True),
        nn.ConvTranspose2d(NGF, 3, 4, 2, 1, bias=False), nn.Tanh(),
    )


def discriminator():
    return nn.Sequential(
        nn.Conv2d(3, NDF, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(NDF * 2), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(NDF * 2, NDF * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(NDF * 4), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(NDF * 4, 1, 4, 1, 0, bias=False), nn.Sigmoid(),
    )


def train(dataloader, num_epochs=25, device="cuda" if torch.cuda.is_available() else "cpu"):
    netG, netD = generator().to(device), discriminator().to(device)
    criterion = nn.BCELoss()
    fixed_noise = torch.randn(64, NZ, 1, 1, device=device)
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    img_list, G_losses, D_losses = [], [], []
    iters = 0
    for epoch in range(num_epochs):
        for i, (real,) in enumerate(dataloader):
            netD.zero_grad()
            real = real.to(device)
            label = torch.full((real.size(0),), 1.0, device=device)
            errD_real = criterion(netD(real).view(-1), label)
            errD_real.backward()
            fake = netG(torch.randn(real.size(0), NZ, 1, 1, device=device))
            label.fill_(0.0)
            output = netD(fake.detach()).view(-1)
            errD_fake = criterion(output, label)
            errD_fake.backward()
            errD = errD_real + errD_fake
            optimizerD.step()

            netG.zero_grad()
            label.fill_(1.0)
            output = netD(fake).view(-1)
            errG = criterion(output, label)
            errG.backward()
            D_G_z2 = output.mean().item()
            optimizerG.step()

            G_losses.append(errG.item())
            D_losses.append(errD.item())
            if (iters % 500 == 0) or ((epoch == num_epochs - 1) and (i == len(dataloader) - 1)):
                with torch.no_grad():
                    samples = netG(fixed_noise).detach().cpu()
                img_list.append(vutils.make_grid(samples, padding=2, normalize=True))
            if i % 50 == 0:
                print(f"[{epoch}/{num_epochs}][{i}/{len(dataloader)}] Loss_D {errD.item():.4f} Loss_G {errG.item():.4f} D(G(z)) {D_G_z2:.4f}")
            iters += 1
    return G_losses, D_losses, img_list


if __name__ == "__main__":
    faces = torch.rand(20000, 3, 32, 32) * 2 - 1
    train(DataLoader(TensorDataset(faces), batch_size=128, shuffle=True, num_workers=2))
