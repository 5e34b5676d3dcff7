"""Each Optuna trial builds its model, reports a score and lets the model go; gc runs after every trial

Source: https://optuna.readthedocs.io/en/stable/faq.html#how-do-i-avoid-running-out-of-memory-oom-when-optimizing-studies
Style: plain
Kind: negative: an Optuna objective creating a model per trial (nothing keeps it afterwards)
"""
import optuna
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TRAIN = TensorDataset(torch.randn(8192, 64), torch.randint(0, 10, (8192,)))
VALID = TensorDataset(torch.randn(2048, 64), torch.randint(0, 10, (2048,)))


def objective(trial):
    width = trial.suggest_int("width", 32, 1024, log=True)
    model = nn.Sequential(nn.Linear(64, width), nn.ReLU(), nn.Linear(width, 10)).to(DEVICE)
    optimizer = torch.optim.Adam(model.parameters(), lr=trial.suggest_float("lr", 1e-5, 1e-2, log=True))
    for epoch in range(10):
        model.train()
        for x, y in DataLoader(TRAIN, batch_size=128, shuffle=True):
            loss = nn.functional.cross_entropy(model(x.to(DEVICE)), y.to(DEVICE))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            correct = sum((model(x.to(DEVICE)).argmax(1).cpu() == y).sum().item() for x, y in DataLoader(VALID, batch_size=512))
        accuracy = correct / len(VALID)
        trial.report(accuracy, epoch)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return accuracy


if __name__ == "__main__":
    study = optuna.create_study(direction="maximize", pruner=optuna.pruners.MedianPruner())
    study.optimize(objective, n_trials=200, gc_after_trial=True)
    print(study.best_params)
