"""A saliency script installs activation hooks in a helper that returns the handles; every caller removes them when the explanation is done

Source: https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_forward_hook
Style: plain
Kind: negative: resembles hooks registered on every call and never removed (LL106); the helper hands its handles back and each caller removes them in a finally block
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def install_recorders(model, store):
    handles = []
    for name, module in model.named_modules():
        if isinstance(module, nn.Conv2d):
            def record(mod, inputs, output, name=name):
                store[name] = output.detach()
            handles.append(module.register_forward_hook(record))
    return handles


def uninstall(handles):
    while handles:
        handles.pop().remove()


def grad_times_activation(model, image, label):
    activations = {}
    handles = install_recorders(model, activations)
    try:
        image = image.clone().requires_grad_(True)
        score = model(image)[0, label]
        (grad,) = torch.autograd.grad(score, image)
        saliency = (grad * image).abs().sum(1).detach()
    finally:
        uninstall(handles)
    return saliency, {name: act.mean().item() for name, act in activations.items()}


class SmallNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.c1 = nn.Conv2d(3, 32, 3, padding=1)
        self.c2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.relu(self.c2(x))
        return self.fc(x.mean((2, 3)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--images", type=int, default=500)
    args = parser.parse_args()
    model = SmallNet().eval()
    maps = []
    for index in range(args.images):
        image = torch.rand(1, 3, 64, 64)
        label = int(model(image).argmax())
        saliency, summary = grad_times_activation(model, image, label)
        maps.append(saliency.numpy())
        if index % 100 == 0:
            print(index, summary)
    print(len(maps))


if __name__ == "__main__":
    main()
