"""A from-scratch batch norm returns its moving statistics with the graph attached

Source: https://github.com/d2l-ai/d2l-en/pull/1342
Style: plain
Kind: running statistics in a custom normalization module carry the graph from step to step
Runnable from: bench/leaks/cases/plain_d2l_batch_norm_moving_stats
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
    if not torch.is_grad_enabled():
        X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
    else:
        if X.dim() == 2:
            mean = X.mean(dim=0)
            var = ((X - mean) ** 2).mean(dim=0)
        else:
            mean = X.mean(dim=(0, 2, 3), keepdim=True)
            var = ((X - mean) ** 2).mean(dim=(0, 2, 3), keepdim=True)
        X_hat = (X - mean) / torch.sqrt(var + eps)
        moving_mean = momentum * moving_mean + (1.0 - momentum) * mean
        moving_var = momentum * moving_var + (1.0 - momentum) * var
    Y = gamma * X_hat + beta
    return Y, moving_mean, moving_var


class BatchNorm(nn.Module):
    def __init__(self, num_features, num_dims):
        super().__init__()
        shape = (1, num_features) if num_dims == 2 else (1, num_features, 1, 1)
        self.gamma = nn.Parameter(torch.ones(shape))
        self.beta = nn.Parameter(torch.zeros(shape))
        self.moving_mean = torch.zeros(shape)
        self.moving_var = torch.ones(shape)

    def forward(self, X):
        if self.moving_mean.device != X.device:
            self.moving_mean = self.moving_mean.to(X.device)
            self.moving_var = self.moving_var.to(X.device)
        Y, self.moving_mean, self.moving_var = batch_norm(  # leak: LL103
            X, self.gamma, self.beta, self.moving_mean, self.moving_var, eps=1e-5, momentum=0.9)
        return Y


def lenet_bn():
    return nn.Sequential(
        nn.Conv2d(1, 6, 5), BatchNorm(6, 4), nn.Sigmoid(), nn.AvgPool2d(2, 2),
        nn.Conv2d(6, 16, 5), BatchNorm(16, 4), nn.Sigmoid(), nn.AvgPool2d(2, 2), nn.Flatten(),
        nn.Linear(16 * 4 * 4, 120), BatchNorm(120, 2), nn.Sigmoid(),
        nn.Linear(120, 84), BatchNorm(84, 2), nn.Sigmoid(), nn.Linear(84, 10))


if __name__ == "__main__":
    torch.manual_seed(0)
    net = lenet_bn()
    data = TensorDataset(torch.randn(1600, 1, 28, 28), torch.randint(0, 10, (1600,)))
    loader = DataLoader(data, batch_size=16, shuffle=True)
    optimizer = torch.optim.SGD(net.parameters(), lr=1.0)
    for epoch in range(1):
        for X, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(net(X), y)
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())
