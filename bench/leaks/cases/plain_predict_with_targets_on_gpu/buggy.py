"""predict_with_targs concatenates every batch's predictions on the GPU before converting them to numpy

Source: https://github.com/fastai/fastai/pull/483
Style: plain
Kind: device memory grows without a graph: all predictions of a large test set kept on the GPU
"""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def to_np(t):
    return t.detach().cpu().numpy()


class TabularNet(nn.Module):
    def __init__(self, n_cont, n_classes, emb_sizes=((1000, 50), (200, 20), (50, 10))):
        super().__init__()
        self.embs = nn.ModuleList(nn.Embedding(n, d) for n, d in emb_sizes)
        width = sum(d for _, d in emb_sizes) + n_cont
        self.mlp = nn.Sequential(nn.Linear(width, 1000), nn.ReLU(), nn.Dropout(0.1),
                                 nn.Linear(1000, 500), nn.ReLU(), nn.Linear(500, n_classes))

    def forward(self, x_cat, x_cont):
        e = [emb(x_cat[:, i]) for i, emb in enumerate(self.embs)]
        return self.mlp(torch.cat(e + [x_cont], dim=1))


def predict_with_targs_(model, dl, device):
    model.eval()
    res = []
    with torch.no_grad():
        for x_cat, x_cont, y in dl:
            out = model(x_cat.to(device), x_cont.to(device))
            res.append((out, y.to(device)))  # leak: new:device-accumulation
    return zip(*res)


def predict_with_targs(model, dl, device):
    preda, targa = predict_with_targs_(model, dl, device)
    return to_np(torch.cat(preda)), to_np(torch.cat(targa))


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    n = 3_000_000
    x_cat = torch.stack([torch.randint(0, 1000, (n,)), torch.randint(0, 200, (n,)), torch.randint(0, 50, (n,))], 1)
    x_cont = torch.randn(n, 16)
    y = torch.randint(0, 100, (n,))
    dl = DataLoader(TensorDataset(x_cat, x_cont, y), batch_size=1024)
    model = TabularNet(n_cont=16, n_classes=100).to(device)
    probs, targets = predict_with_targs(model, dl, device)
    print("accuracy", float(np.mean(probs.argmax(1) == targets)))


if __name__ == "__main__":
    main()
