"""Training scalars go to TensorBoard through add_scalars as Python floats

Source: https://github.com/pytorch/pytorch/issues/36471
Style: plain
Kind: negative: values handed to a logger every step (floats, not graph tensors)
"""
import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter


class Classifier(nn.Module):
    def __init__(self, n_in=32, hidden=128, classes=2):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.body(x))


def parse_args():
    import argparse

    parser = argparse.ArgumentParser(description="Train a toy classifier and log to TensorBoard")
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--logdir", default="runs/scalars")
    return parser.parse_args()


def main():
    args = parse_args()
    model = Classifier()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    writer = SummaryWriter(args.logdir)
    for step in range(args.steps):
        x, y = torch.randn(256, 32), torch.randint(0, 2, (256,))
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        accuracy = (logits.argmax(1) == y).float().mean().item()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item()
        writer.add_scalars("train", {"loss": loss.item(), "accuracy": accuracy}, step)
        writer.add_scalar("train/grad_norm", grad_norm, step)
    writer.close()


if __name__ == "__main__":
    main()
