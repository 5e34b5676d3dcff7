"""A benchmark helper built for every evaluation registers forward hooks and never removes them

Source: https://github.com/NeuroBench/neurobench/issues/184
Style: plain
Kind: hooks registered by a helper built once per epoch
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class ActivationSparsity:
    """Counts zero activations of every ReLU while a model runs over a dataset."""

    def __init__(self, model):
        self.model = model
        self.zeros = 0
        self.total = 0
        for module in model.modules():
            if isinstance(module, nn.ReLU):
                module.register_forward_hook(self._count)  # leak: LL106

    def _count(self, module, inputs, output):
        self.zeros += int((output == 0).sum())
        self.total += output.numel()

    def run(self, loader):
        correct = 0
        with torch.no_grad():
            for x, y in loader:
                correct += int((self.model(x).argmax(1) == y).sum())
        return {"accuracy": correct / len(loader.dataset), "sparsity": self.zeros / max(self.total, 1)}


def make_loader(n, shuffle):
    data = TensorDataset(torch.randn(n, 40), torch.randint(0, 12, (n,)))
    return DataLoader(data, batch_size=128, shuffle=shuffle)


def main(epochs=30):
    model = nn.Sequential(nn.Linear(40, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 12))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_loader, test_loader = make_loader(4096, True), make_loader(1024, False)
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        benchmark = ActivationSparsity(model)
        print(epoch, benchmark.run(test_loader))


if __name__ == "__main__":
    main()
