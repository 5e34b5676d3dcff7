"""An Optuna objective keeps every trial's trained model in a module-level dict

Source: https://github.com/optuna/optuna/issues/1224
Style: plain
Kind: an Optuna objective creating a model per trial; every model stays referenced
Runnable from: bench/leaks/cases/plain_optuna_models_kept_per_trial
Run: --step __main__:objective
"""
import os
import random
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

CHECKPOINT = os.path.join(tempfile.mkdtemp(), "trial_{}.pt")


class Trial:
    """The part of optuna.Trial the objective uses: number, suggest_*, report, should_prune."""

    def __init__(self, number, rng):
        self.number, self.rng = number, rng

    def suggest_int(self, name, low, high, log=False):
        return high if name == "width" else self.rng.randint(low, high)

    def suggest_float(self, name, low, high, log=False):
        return self.rng.uniform(low, high)

    def report(self, value, step):
        pass

    def should_prune(self):
        return False


def build_model(trial):
    layers, width = trial.suggest_int("layers", 1, 1), trial.suggest_int("width", 64, 256, log=True)
    modules, in_dim = [], 128
    for _ in range(layers):
        modules += [nn.Linear(in_dim, width), nn.ReLU(), nn.Dropout(trial.suggest_float("dropout", 0.0, 0.5))]
        in_dim = width
    modules.append(nn.Linear(in_dim, 10))
    return nn.Sequential(*modules)


def loaders():
    train = TensorDataset(torch.randn(256, 128), torch.randint(0, 10, (256,)))
    valid = TensorDataset(torch.randn(128, 128), torch.randint(0, 10, (128,)))
    return DataLoader(train, batch_size=128, shuffle=True), DataLoader(valid, batch_size=128)


def objective(trial):
    model = build_model(trial)
    optimizer = torch.optim.Adam(model.parameters(), lr=trial.suggest_float("lr", 1e-5, 1e-2, log=True))
    train_loader, valid_loader = loaders()
    for epoch in range(1):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in valid_loader:
                correct += (model(x).argmax(1) == y).sum().item()
        accuracy = correct / len(valid_loader.dataset)
        trial.report(accuracy, epoch)
    torch.save(model.state_dict(), CHECKPOINT.format(trial.number))
    return accuracy


if __name__ == "__main__":
    torch.manual_seed(0)
    rng = random.Random(0)
    results = {number: objective(Trial(number, rng)) for number in range(100)}
    best = torch.load(CHECKPOINT.format(max(results, key=results.get)))
    torch.save(best, os.path.join(tempfile.mkdtemp(), "best.pt"))
