"""Epoch metrics are accumulated from loss.data.cpu().numpy(), which carries no graph

Source: https://github.com/ChengJin-git/HMIL/issues/4
Style: plain
Kind: negative: loss values accumulated across steps into a dict (as numpy scalars)
"""
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


class HierarchicalMIL(nn.Module):
    def __init__(self, dim=512, coarse=2, fine=6):
        super().__init__()
        self.attn_coarse = nn.Linear(dim, 1)
        self.attn_fine = nn.Linear(dim, 1)
        self.coarse_head, self.fine_head = nn.Linear(dim, coarse), nn.Linear(dim, fine)

    def forward(self, bag):
        a_c = self.attn_coarse(bag).softmax(0)
        a_f = self.attn_fine(bag).softmax(0)
        return self.coarse_head((a_c * bag).sum(0)), self.fine_head((a_f * bag).sum(0)), a_c, a_f


def train_epoch(model, optimizer, bags):
    metrics = defaultdict(float)
    for bag, coarse_label, fine_label in bags:
        coarse, fine, a_c, a_f = model(bag)
        loss_coarse = F.cross_entropy(coarse[None], coarse_label[None])
        loss_fine = F.cross_entropy(fine[None], fine_label[None])
        loss_attention = F.mse_loss(a_c, a_f)
        loss = loss_coarse + loss_fine + 0.1 * loss_attention
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        metrics["loss_coarse"] += loss_coarse.data.cpu().numpy()
        metrics["loss_fine"] += loss_fine.data.cpu().numpy()
        metrics["loss_attention"] += loss_attention.data.cpu().numpy()
    return {k: v / len(bags) for k, v in metrics.items()}


if __name__ == "__main__":
    model = HierarchicalMIL()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    bags = [(torch.randn(int(torch.randint(50, 500, ())), 512), torch.randint(0, 2, ()), torch.randint(0, 6, ())) for _ in range(400)]
    for epoch in range(100):
        print(epoch, train_epoch(model, optimizer, bags))
