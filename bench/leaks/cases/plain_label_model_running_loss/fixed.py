"""A weak-supervision label model sums its minibatch losses into running_loss without .item()

Source: https://github.com/BatsResearch/labelmodels/issues/4
Style: plain
Kind: loss accumulated across steps with the graph (running_loss is a sum of non-detached tensors)
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class NaiveBayesLabelModel(nn.Module):
    """Estimates labeling-function accuracies from their votes alone (no gold labels)."""

    def __init__(self, num_classes, num_lfs, init_acc=0.7):
        super().__init__()
        self.num_classes = num_classes
        self.class_balance = nn.Parameter(torch.zeros(num_classes))
        logit = float(np.log(init_acc / (1 - init_acc)))
        self.accuracy = nn.Parameter(torch.full((num_lfs,), logit))
        self.propensity = nn.Parameter(torch.zeros(num_lfs))

    def log_likelihood(self, votes):
        # votes: (batch, num_lfs), 0 = abstain, 1..k = class vote
        acc = torch.sigmoid(self.accuracy)
        prop = torch.sigmoid(self.propensity)
        abstain = (votes == 0).float()
        scores = []
        for c in range(1, self.num_classes + 1):
            correct = (votes == c).float()
            wrong = 1.0 - correct - abstain
            ll = (abstain * torch.log1p(-prop)
                  + correct * torch.log(prop * acc)
                  + wrong * torch.log(prop * (1 - acc) / (self.num_classes - 1)))
            scores.append(ll.sum(dim=1))
        joint = torch.stack(scores, dim=1) + torch.log_softmax(self.class_balance, dim=0)
        return torch.logsumexp(joint, dim=1)

    def estimate(self, votes, epochs=5, batch_size=64, lr=0.01, l2=0.0):
        loader = DataLoader(TensorDataset(torch.as_tensor(votes)), batch_size=batch_size, shuffle=True)
        optimizer = torch.optim.SGD(self.parameters(), lr=lr, momentum=0.9)
        for epoch in range(epochs):
            running_loss = 0.0
            for i, (batch,) in enumerate(loader):
                optimizer.zero_grad()
                loss = -self.log_likelihood(batch).mean()
                loss = loss + l2 * (self.accuracy ** 2).sum()
                loss.backward()
                optimizer.step()
                running_loss += loss.item()
            print(f"epoch {epoch}: mean loss {running_loss / (i + 1):.4f}")
        return self

    @torch.no_grad()
    def posterior(self, votes):
        return torch.sigmoid(self.accuracy), torch.softmax(self.class_balance, dim=0)


def synthetic_votes(n, num_lfs, num_classes, rng):
    truth = rng.integers(1, num_classes + 1, size=n)
    votes = np.zeros((n, num_lfs), dtype=np.int64)
    for j in range(num_lfs):
        fires = rng.random(n) < 0.4
        right = rng.random(n) < 0.75
        noise = rng.integers(1, num_classes + 1, size=n)
        votes[fires, j] = np.where(right[fires], truth[fires], noise[fires])
    return votes


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=2_000_000)
    parser.add_argument("--lfs", type=int, default=40)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    votes = synthetic_votes(args.examples, args.lfs, 3, rng)
    model = NaiveBayesLabelModel(num_classes=3, num_lfs=args.lfs)
    model.estimate(votes, epochs=5)
    accuracies, balance = model.posterior(votes)
    print(accuracies[:5], balance)
