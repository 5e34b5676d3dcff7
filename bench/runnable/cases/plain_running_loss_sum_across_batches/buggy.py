"""A training loop keeps running_loss as a tensor sum of every batch's loss

Source: https://github.com/pytorch/pytorch/issues/17568
Style: plain
Kind: loss accumulated across steps with the graph
Runnable from: bench/leaks/cases/plain_running_loss_sum_across_batches
"""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class PointCloudDataset(Dataset):
    def __init__(self, n=6400, points=64):
        rng = np.random.default_rng(0)
        self.data = rng.random((n, points, 3), dtype=np.float32)
        self.labels = rng.integers(0, 40, n)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        return torch.stack([torch.from_numpy(self.data[idx])]), int(self.labels[idx])


class PointNet(nn.Module):
    def __init__(self, classes=40):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 256), nn.ReLU())
        self.head = nn.Linear(256, classes)

    def forward(self, pts):
        return self.head(self.mlp(pts.squeeze(1)).max(dim=1).values)


def main(epochs=1):
    torch.manual_seed(0)
    model = PointNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(PointCloudDataset(), batch_size=32, shuffle=True)
    for epoch in range(epochs):
        running_loss = 0.0
        for i, (pts, labels) in enumerate(loader):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(pts), labels)
            loss.backward()
            optimizer.step()
            running_loss += loss  # leak: LL101
            if i % 100 == 99:
                print(f"[{epoch + 1}, {i + 1}] loss: {running_loss / 100:.3f}")
                running_loss = 0.0


if __name__ == "__main__":
    main()
