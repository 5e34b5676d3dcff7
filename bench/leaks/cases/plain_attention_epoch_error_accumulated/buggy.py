"""A from-scratch attention classifier averages its epoch error and accuracy with += on tensors

Source: https://github.com/jostmey/NakedAttention/issues/1
Style: plain
Kind: loss and accuracy accumulated across steps with the graph (the epoch averages hold every batch's graph)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class NakedAttention(nn.Module):
    """Single-head self-attention written out by hand, then mean pooling and a linear readout."""

    def __init__(self, num_features, num_hidden, num_classes):
        super().__init__()
        self.query = nn.Linear(num_features, num_hidden)
        self.key = nn.Linear(num_features, num_hidden)
        self.value = nn.Linear(num_features, num_hidden)
        self.readout = nn.Linear(num_hidden, num_classes)

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)
        weights = torch.softmax(q @ k.transpose(1, 2) / k.shape[-1] ** 0.5, dim=-1)
        return self.readout((weights @ v).mean(dim=1))


def make_loader(n, length=196, features=16, batch_size=128, shuffle=True):
    x = torch.randn(n, length, features)
    y = torch.randint(0, 10, (n,))
    return DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=shuffle)


def main(num_epochs=200):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader_train = make_loader(60_000)
    loader_val = make_loader(10_000, shuffle=False)
    model = NakedAttention(16, 64, 10).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(num_epochs):
        e_train = a_train = 0.0
        model.train()
        for x, y in loader_train:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            e_batch = F.cross_entropy(logits, y)
            a_batch = (logits.argmax(dim=1) == y).float().mean()
            optimizer.zero_grad()
            e_batch.backward()
            optimizer.step()
            e_train += e_batch / len(loader_train)  # leak: LL101
            a_train += a_batch / len(loader_train)
        e_val = a_val = 0.0
        model.eval()
        with torch.no_grad():
            for x, y in loader_val:
                x, y = x.to(device), y.to(device)
                logits = model(x)
                e_val += F.cross_entropy(logits, y) / len(loader_val)
                a_val += (logits.argmax(dim=1) == y).float().mean() / len(loader_val)
        print(f"epoch {epoch} train loss {float(e_train):.4f} acc {float(a_train):.3f} "
              f"val loss {float(e_val):.4f} acc {float(a_val):.3f}")


if __name__ == "__main__":
    main()
