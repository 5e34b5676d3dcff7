"""Collecting VGG-19 outputs for a set of images in a list: RAM explodes inside the loop

Source: https://github.com/pytorch/pytorch/issues/836
Style: plain
Kind: graph kept across steps in a list of model outputs (each entry holds the whole VGG forward)
"""
import argparse
import os

import numpy as np
import torch
import torchvision.models as models
import torchvision.transforms as T
from PIL import Image


def load_images(folder, size=224):
    tf = T.Compose([T.Resize(size), T.CenterCrop(size), T.ToTensor(),
                    T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])
    for name in sorted(os.listdir(folder)):
        if name.lower().endswith((".jpg", ".jpeg", ".png")):
            yield name, tf(Image.open(os.path.join(folder, name)).convert("RGB")).unsqueeze(0)


def random_images(n, size=224):
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
    parser.add_argument("--images", default=None, help="folder of images; random tensors when omitted")
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--out", default="vgg19_features.npz")
    args = parser.parse_args()
    vgg19 = models.vgg19(weights=None)
    vgg19.classifier = vgg19.classifier[:-1]  # keep the 4096-d penultimate layer
    vgg19.eval()
    images = load_images(args.images) if args.images else random_images(args.count)
    names, feats = extract(vgg19, images)
    np.savez(args.out, names=np.array(names), features=feats.detach().numpy())
    print(f"saved {len(names)} feature vectors of size {feats.shape[1]}")


if __name__ == "__main__":
    main()
