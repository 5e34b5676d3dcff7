"""Truncated BPTT over a long signal: the LSTM state is carried to the next chunk, detached every time

Source: https://www.codegenes.net/blog/detach-hidden-states-pytorch
Style: seq2seq
Kind: negative: a recurrent state fed into the next iteration (detached at the start of each chunk)
"""
import torch
import torch.nn as nn


class Forecaster(nn.Module):
    def __init__(self, n_in=8, hidden=256, layers=2):
        super().__init__()
        self.lstm = nn.LSTM(n_in, hidden, layers, batch_first=True)
        self.head = nn.Linear(hidden, n_in)

    def forward(self, x, state):
        out, state = self.lstm(x, state)
        return self.head(out), state


def train_epoch(model, optimizer, series, bptt=100):
    state = None
    total = 0.0
    for start in range(0, series.shape[1] - bptt - 1, bptt):
        x = series[:, start:start + bptt]
        y = series[:, start + 1:start + bptt + 1]
        if state is not None:
            state = tuple(s.detach() for s in state)
        pred, state = model(x, state)
        loss = nn.functional.mse_loss(pred, y)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        total += loss.item()
    return total


if __name__ == "__main__":
    model = Forecaster()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    series = torch.randn(16, 100_000, 8).cumsum(1) * 0.01
    for epoch in range(20):
        print(epoch, train_epoch(model, optimizer, series))
