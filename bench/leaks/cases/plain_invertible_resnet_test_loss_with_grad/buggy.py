"""An invertible residual classifier is evaluated on the test set every epoch without disabling autograd

Source: https://github.com/jhjacobsen/invertible-resnet/issues/15
Style: plain
Kind: evaluation forward records a graph nobody uses: model.eval() is called but the test loop runs with grad enabled, so each test batch builds the whole invertible network's graph (spectral-norm power iterations included); OOM when several classifiers share a GPU
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


class InvertibleBlock(nn.Module):
    def __init__(self, channels, hidden, coeff=0.9):
        super().__init__()
        sn = nn.utils.parametrizations.spectral_norm
        self.branch = nn.Sequential(
            nn.ELU(), sn(nn.Conv2d(channels, hidden, 3, padding=1)),
            nn.ELU(), sn(nn.Conv2d(hidden, hidden, 1)),
            nn.ELU(), sn(nn.Conv2d(hidden, channels, 3, padding=1)),
        )
        self.coeff = coeff

    def forward(self, x):
        return x + self.coeff * self.branch(x)


class IResNetClassifier(nn.Module):
    def __init__(self, num_classes=10, width=64, depth=12):
        super().__init__()
        self.stem = nn.PixelUnshuffle(2)
        self.blocks = nn.Sequential(*[InvertibleBlock(12, width) for _ in range(depth)])
        self.head = nn.Linear(12, num_classes)

    def forward(self, x):
        z = self.blocks(self.stem(x))
        logits = self.head(F.adaptive_avg_pool2d(F.relu(z), 1).flatten(1))
        return logits, z


def train_epoch(model, loader, optimizer, device):
    model.train()
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        logits, _ = model(inputs)
        loss = F.cross_entropy(logits, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test(model, loader, device):
    model.eval()
    test_loss, correct, seen = 0.0, 0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        logits, _ = model(inputs)  # leak: LL201
        test_loss += F.cross_entropy(logits, targets, reduction="sum").item()
        correct += (logits.argmax(1) == targets).sum().item()
        seen += targets.numel()
    return test_loss / seen, correct / seen


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--test-batch", type=int, default=500)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,) * 3, (0.5,) * 3)])
    train_loader = DataLoader(datasets.CIFAR10("data", True, tf, download=True), batch_size=128, shuffle=True,
                              num_workers=4)
    test_loader = DataLoader(datasets.CIFAR10("data", False, tf, download=True), batch_size=args.test_batch,
                             num_workers=4)
    model = IResNetClassifier().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    best = 0.0
    for epoch in range(args.epochs):
        train_epoch(model, train_loader, optimizer, device)
        loss, acc = test(model, test_loader, device)
        if acc > best:
            best = acc
            torch.save(model.state_dict(), f"iresnet_seed{args.seed}.pt")
        print(f"epoch {epoch} test loss {loss:.4f} acc {acc:.4f} best {best:.4f}")


if __name__ == "__main__":
    main()
