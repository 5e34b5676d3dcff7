"""Collecting VGG-19 outputs for a set of images in a list: RAM explodes inside the loop

Source: https://github.com/pytorch/pytorch/issues/836
Style: plain
Kind: graph kept across steps in a list of model outputs (each entry holds the whole VGG forward)
Runnable from: bench/leaks/cases/plain_vgg_features_collected_with_graph
Run: --step __main__:FeatureNet.forward
"""
import argparse
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn


class FeatureNet(nn.Module):
    """A small VGG-like stack; the classifier stops at the penultimate layer."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32 * 16, 256), nn.ReLU())

    def forward(self, x):
        return self.classifier(self.features(x))


def random_images(n, size=32):
    for i in range(n):
        yield f"random_{i:05d}", torch.randn(1, 3, size, size)


def extract(model, images):
    names, feats = [], []
    for name, image in images:
        with torch.no_grad():
            feats.append(model(image))
        names.append(name)
    return names, torch.cat(feats)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--out", default=os.path.join(tempfile.mkdtemp(), "features.npz"))
    args = parser.parse_args()
    torch.manual_seed(0)
    model = FeatureNet()
    model.eval()
    names, feats = extract(model, random_images(args.count))
    np.savez(args.out, names=np.array(names), features=feats.detach().numpy())
    print(f"saved {len(names)} feature vectors of size {feats.shape[1]}")


if __name__ == "__main__":
    main()
