"""A DCGAN notebook generates samples from fixed noise after every epoch and keeps them with their graph

Source: https://github.com/udacity/deep-learning-v2-pytorch/pull/106
Style: gan
Kind: periodic sampling inside the training loop; samples list keeps every epoch's graph on the GPU
"""
import pickle as pkl

import numpy as np
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, z_size=100, conv_dim=32):
        super().__init__()
        self.fc = nn.Linear(z_size, conv_dim * 4 * 4 * 4)
        self.deconv = nn.Sequential(nn.ConvTranspose2d(conv_dim * 4, conv_dim * 2, 4, 2, 1), nn.BatchNorm2d(conv_dim * 2), nn.ReLU(),
                                    nn.ConvTranspose2d(conv_dim * 2, conv_dim, 4, 2, 1), nn.BatchNorm2d(conv_dim), nn.ReLU(),
                                    nn.ConvTranspose2d(conv_dim, 3, 4, 2, 1), nn.Tanh())
        self.conv_dim = conv_dim

    def forward(self, z):
        return self.deconv(self.fc(z).view(-1, self.conv_dim * 4, 4, 4))


def train(D, G, n_epochs, z_size=100, device="cuda"):
    d_optimizer = torch.optim.Adam(D.parameters(), 2e-4, (0.5, 0.999))
    g_optimizer = torch.optim.Adam(G.parameters(), 2e-4, (0.5, 0.999))
    criterion = nn.BCEWithLogitsLoss()
    samples, losses = [], []
    fixed_z = torch.from_numpy(np.random.uniform(-1, 1, size=(16, z_size))).float().to(device)
    for epoch in range(n_epochs):
        for _ in range(500):
            real = torch.rand(128, 3, 32, 32, device=device) * 2 - 1
            fake = G(torch.rand(128, z_size, device=device) * 2 - 1)
            d_loss = criterion(D(real).squeeze(), torch.ones(128, device=device)) + criterion(D(fake.detach()).squeeze(), torch.zeros(128, device=device))
            d_optimizer.zero_grad()
            d_loss.backward()
            d_optimizer.step()
            g_loss = criterion(D(fake).squeeze(), torch.ones(128, device=device))
            g_optimizer.zero_grad()
            g_loss.backward()
            g_optimizer.step()
        losses.append((d_loss.item(), g_loss.item()))
        G.eval()
        with torch.no_grad():
            samples_z = G(fixed_z)
        samples.append(samples_z.cpu())
        G.train()
    with open("train_samples.pkl", "wb") as f:
        pkl.dump(samples, f)
    return losses


if __name__ == "__main__":
    D = nn.Sequential(nn.Conv2d(3, 32, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(32, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(64 * 8 * 8, 1)).cuda()
    train(D, Generator().cuda(), n_epochs=50)
