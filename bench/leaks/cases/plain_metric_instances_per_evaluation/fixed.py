"""A fresh AUROC metric is built for every evaluation pass and never reset

Source: https://github.com/Lightning-AI/torchmetrics/issues/1949
Style: plain
Kind: torchmetrics metrics created per evaluation, states never released
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics.classification import BinaryAUROC, BinaryAveragePrecision

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def evaluate(model, loader):
    auroc = BinaryAUROC().to(DEVICE)
    average_precision = BinaryAveragePrecision().to(DEVICE)
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            scores = model(x.to(DEVICE)).squeeze(-1).sigmoid()
            auroc.update(scores, y.to(DEVICE))
            average_precision.update(scores, y.to(DEVICE))
    result = auroc.compute().item(), average_precision.compute().item()
    auroc.reset()
    average_precision.reset()
    return result


def main():
    model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 1)).to(DEVICE)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    train = DataLoader(TensorDataset(torch.randn(100_000, 32), torch.randint(0, 2, (100_000,))), batch_size=1024, shuffle=True)
    pipelines = {name: DataLoader(TensorDataset(torch.randn(200_000, 32), torch.randint(0, 2, (200_000,))), batch_size=4096)
                 for name in ("holdout", "shifted", "noisy")}
    for epoch in range(50):
        model.train()
        for x, y in train:
            loss = nn.functional.binary_cross_entropy_with_logits(model(x.to(DEVICE)).squeeze(-1), y.float().to(DEVICE))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        for name, loader in pipelines.items():
            print(epoch, name, evaluate(model, loader))


if __name__ == "__main__":
    main()
