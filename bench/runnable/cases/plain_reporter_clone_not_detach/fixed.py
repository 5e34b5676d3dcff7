"""A metrics reporter keeps value.clone() of every reported tensor, graph included

Source: https://github.com/pfnet/pytorch-pfn-extras/pull/49
Style: plain
Kind: .clone() taken as if it were .detach(); graph kept in a reporter's store
Runnable from: bench/leaks/cases/plain_reporter_clone_not_detach
"""
import collections

import torch
import torch.nn as nn
import torch.nn.functional as F


class Reporter:
    """Collects named observations during an epoch and summarises them at the end."""

    def __init__(self):
        self.observations = collections.defaultdict(list)

    def report(self, values):
        for name, value in values.items():
            if isinstance(value, torch.Tensor):
                value = value.detach()  # cut the graph; nothing below writes in place
            self.observations[name].append(value)

    def summary(self):
        out = {name: float(torch.stack([torch.as_tensor(v) for v in vals]).mean()) for name, vals in self.observations.items()}
        self.observations.clear()
        return out


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(16 * 16, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.body(x)


def main(epochs=1, iters_per_epoch=200):
    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    reporter = Reporter()
    for epoch in range(epochs):
        for _ in range(iters_per_epoch):
            x = torch.randn(32, 1, 16, 16)
            y = torch.randint(0, 10, (32,))
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            acc = (logits.argmax(1) == y).float().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            reporter.report({"main/loss": loss, "main/accuracy": acc})
        print(epoch, reporter.summary())


if __name__ == "__main__":
    main()
