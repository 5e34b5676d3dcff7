"""Batch inference keeps every batch's predictions on the GPU until the whole file is done

Source: https://github.com/Yasas1994/Jaeger/pull/30
Style: plain
Kind: device memory grows without a graph (detached outputs kept on GPU)
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class FragmentClassifier(nn.Module):
    def __init__(self, vocab=5, dim=64, classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.conv = nn.Sequential(nn.Conv1d(dim, 128, 9, padding=4), nn.ReLU(), nn.Conv1d(128, 128, 9, padding=4), nn.ReLU())
        self.head = nn.Linear(128, classes)

    def forward(self, tokens):
        x = self.embed(tokens).transpose(1, 2)
        return self.head(self.conv(x).mean(-1))


def predict(model, loader, device):
    model.eval()
    all_logits = []
    all_ids = []
    with torch.inference_mode():
        for tokens, ids in loader:
            logits = model(tokens.to(device))
            all_logits.append(torch.softmax(logits, dim=-1).cpu())
            all_ids.append(ids)
    probs = torch.cat(all_logits).numpy()
    return np.concatenate([i.numpy() for i in all_ids]), probs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fragments", type=int, default=200_000)
    parser.add_argument("--batch-size", type=int, default=512)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tokens = torch.randint(0, 5, (args.fragments, 2048))
    loader = DataLoader(TensorDataset(tokens, torch.arange(args.fragments)), batch_size=args.batch_size)
    model = FragmentClassifier().to(device)
    ids, probs = predict(model, loader, device)
    np.savez("predictions.npz", ids=ids, probs=probs)


if __name__ == "__main__":
    main()
