"""A view-synthesis GAN's custom batch norm stores its inference statistics with the graph on every forward

Source: https://github.com/facebookresearch/synsin/pull/20
Style: gan
Kind: running statistics in a custom normalization module carry the graph from step to step
"""
import torch
import torch.nn as nn


class StoredBatchNorm2d(nn.Module):
    """Batch norm whose statistics for test time are kept as plain attributes."""

    def __init__(self, channels, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.gamma = nn.Parameter(torch.ones(1, channels, 1, 1))
        self.beta = nn.Parameter(torch.zeros(1, channels, 1, 1))
        self.stored_mean = torch.zeros(1, channels, 1, 1)
        self.stored_var = torch.ones(1, channels, 1, 1)

    def forward(self, x):
        if self.training:
            mean = x.mean(dim=(0, 2, 3), keepdim=True)
            var = x.var(dim=(0, 2, 3), keepdim=True)
            self.stored_mean = (1 - self.momentum) * self.stored_mean.to(x.device) + self.momentum * mean  # leak: LL103
            self.stored_var = (1 - self.momentum) * self.stored_var.to(x.device) + self.momentum * var  # leak: LL103
        else:
            mean, var = self.stored_mean, self.stored_var
        return self.gamma * (x - mean) / torch.sqrt(var + self.eps) + self.beta


class ResNetEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), StoredBatchNorm2d(64), nn.ReLU(),
                                 nn.Conv2d(64, 64, 3, padding=1), StoredBatchNorm2d(64), nn.ReLU())

    def forward(self, x):
        return self.net(x)


if __name__ == "__main__":
    encoder = ResNetEncoder()
    decoder = nn.Sequential(nn.Conv2d(64, 3, 3, padding=1), nn.Tanh())
    disc = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(64, 1, 4, 1, 1))
    opt_g = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=1e-4)
    for step in range(500_000):
        src, tgt = torch.rand(4, 3, 256, 256), torch.rand(4, 3, 256, 256)
        pred = decoder(encoder(src))
        loss = nn.functional.l1_loss(pred, tgt) - 0.01 * disc(pred).mean()
        opt_g.zero_grad()
        loss.backward()
        opt_g.step()
