"""A statistics collector keeps the loss tensor of every episode in a dict of lists

Source: https://github.com/IBM/mi-prometheus/issues/111
Style: plain
Kind: dicts of lists (stats["loss"].append(...)) keep a graph per step
"""
from collections import defaultdict

import torch
import torch.nn as nn


class StatisticsCollector:
    """Everything the workers log, kept until the end of training for the summary file."""

    def __init__(self):
        self.statistics = defaultdict(list)

    def add(self, key, value):
        self.statistics[key].append(value)

    def export(self, path):
        with open(path, "w") as handle:
            for key, values in self.statistics.items():
                handle.write(f"{key},{','.join(f'{float(v):.5f}' for v in values)}\n")


class SimpleCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 12 * 12, 10))

    def forward(self, x):
        return self.net(x)


class Problem:
    def __init__(self):
        self.loss_function = nn.CrossEntropyLoss()

    def generate_batch(self, size=64):
        return torch.randn(size, 1, 28, 28), torch.randint(0, 10, (size,))

    def evaluate_loss(self, logits, targets):
        return self.loss_function(logits, targets)


def train(episodes=100_000):
    model, problem = SimpleCNN(), Problem()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    collector = StatisticsCollector()
    for episode in range(episodes):
        images, targets = problem.generate_batch()
        logits = model(images)
        loss = problem.evaluate_loss(logits, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        collector.add("episode", episode)
        collector.add("loss", loss)  # leak: LL102
        collector.add("acc", (logits.argmax(1) == targets).float().mean())
    collector.export("training_statistics.csv")


if __name__ == "__main__":
    train()
