"""An Optuna objective keeps every trial's trained model in a module-level dict

Source: https://github.com/optuna/optuna/issues/1224
Style: plain
Kind: an Optuna objective creating a model per trial; every model stays referenced
"""
import optuna
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
CHECKPOINT = "trial_{}.pt"


def build_model(trial):
    layers, width = trial.suggest_int("layers", 1, 4), trial.suggest_int("width", 64, 1024, log=True)
    modules, in_dim = [], 128
    for _ in range(layers):
        modules += [nn.Linear(in_dim, width), nn.ReLU(), nn.Dropout(trial.suggest_float("dropout", 0.0, 0.5))]
        in_dim = width
    modules.append(nn.Linear(in_dim, 10))
    return nn.Sequential(*modules).to(DEVICE)


def loaders():
    train = TensorDataset(torch.randn(8192, 128), torch.randint(0, 10, (8192,)))
    valid = TensorDataset(torch.randn(2048, 128), torch.randint(0, 10, (2048,)))
    return DataLoader(train, batch_size=128, shuffle=True), DataLoader(valid, batch_size=512)


def objective(trial):
    model = build_model(trial)
    optimizer = torch.optim.Adam(model.parameters(), lr=trial.suggest_float("lr", 1e-5, 1e-2, log=True))
    train_loader, valid_loader = loaders()
    for epoch in range(5):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x.to(DEVICE)), y.to(DEVICE)).backward()
            optimizer.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in valid_loader:
                correct += (model(x.to(DEVICE)).argmax(1).cpu() == y).sum().item()
        accuracy = correct / len(valid_loader.dataset)
        trial.report(accuracy, epoch)
        if trial.should_prune():
            raise optuna.TrialPruned()
    torch.save(model.state_dict(), CHECKPOINT.format(trial.number))
    return accuracy


if __name__ == "__main__":
    study = optuna.create_study(direction="maximize")
    study.optimize(objective, n_trials=100)
    best = torch.load(CHECKPOINT.format(study.best_trial.number))
    torch.save(best, "best.pt")
