"""Greedy module-wise training accumulates each module's loss and detaches the features between modules

Source: https://github.com/loeweX/Greedy_InfoMax/pull/18
Style: plain
Kind: negative: losses accumulated in a loop over modules within one step, one optimizer, one backward
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GIMEncoder(nn.Module):
    def __init__(self, modules_n=3, ch=64):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(nn.Conv2d(3 if i == 0 else ch, ch, 3, padding=1), nn.ReLU()) for i in range(modules_n)])
        self.predictors = nn.ModuleList([nn.Conv2d(ch, ch, 1) for _ in range(modules_n)])

    def forward(self, x):
        loss = 0.0
        for block, predictor in zip(self.blocks, self.predictors):
            z = block(x)
            context = predictor(z)
            logits = torch.einsum("bchw,nchw->bn", context[:, :, :-1], z[:, :, 1:]) / z[:, :, 1:].numel() * z.shape[0]
            loss = loss + F.cross_entropy(logits, torch.arange(z.shape[0]))
            x = z.detach()
        return loss


def parse_args():
    import argparse

    parser = argparse.ArgumentParser(description="Greedy InfoMax, one optimizer for all modules")
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--lr", type=float, default=2e-4)
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    model = GIMEncoder()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        for step in range(200):
            loss = model(torch.rand(32, 3, 64, 64))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())
