"""A perceptual loss collects VGG features of one forward pass in a local list and compares them

Source: https://pytorch.org/docs/stable/notes/faq.html
Style: plain
Kind: negative: graph-attached features appended to a list inside one forward (the list dies with the call)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.models import vgg16


class PerceptualLoss(nn.Module):
    def __init__(self, layers=(3, 8, 15, 22)):
        super().__init__()
        self.features = vgg16(weights=None).features[: max(layers) + 1].eval()
        for p in self.features.parameters():
            p.requires_grad_(False)
        self.layers = set(layers)

    def extract(self, x):
        feats = []
        for i, layer in enumerate(self.features):
            x = layer(x)
            if i in self.layers:
                feats.append(x)
        return feats

    def forward(self, pred, target):
        loss = 0.0
        for fp, ft in zip(self.extract(pred), self.extract(target)):
            loss = loss + F.l1_loss(fp, ft)
        return loss


class Upscaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 3 * 4, 3, padding=1), nn.PixelShuffle(2))

    def forward(self, x):
        return self.net(x)


if __name__ == "__main__":
    model, criterion = Upscaler(), PerceptualLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for step in range(50_000):
        hr = torch.rand(8, 3, 128, 128)
        lr = F.interpolate(hr, scale_factor=0.5, mode="bicubic")
        loss = criterion(model(lr), hr)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 500 == 0:
            print(step, loss.item())
