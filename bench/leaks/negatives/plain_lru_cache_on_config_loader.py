"""lru_cache memoises a module-level function that parses a small config, not tensors or models

Source: https://rednafi.github.io/reflections/dont-wrap-instance-methods-with-functoolslru_cache-decorator-in-python.html
Style: plain
Kind: negative: a functools cache used in a training script (a plain function keyed on strings)
"""
import json
from functools import lru_cache

import torch
import torch.nn as nn


@lru_cache(maxsize=32)
def load_label_map(path: str) -> dict:
    with open(path) as handle:
        return {name: idx for idx, name in enumerate(json.load(handle))}


@lru_cache(maxsize=None)
def warmup_factor(step: int, warmup_steps: int) -> float:
    return min(1.0, (step + 1) / warmup_steps)


def encode_labels(names, path="labels.json"):
    label_map = load_label_map(path)
    return torch.tensor([label_map[n] for n in names])


def main(steps=10_000):
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 20))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: warmup_factor(step, 500))
    names = [f"class_{i % 20}" for i in range(64)]
    with open("labels.json", "w") as handle:
        json.dump([f"class_{i}" for i in range(20)], handle)
    for step in range(steps):
        x, y = torch.randn(64, 64), encode_labels(names)
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()


if __name__ == "__main__":
    main()
