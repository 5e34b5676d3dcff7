"""A mean-only batch norm layer updates its running mean buffer with the autograd graph

Source: https://github.com/pytorch/pytorch/issues/20275
Style: plain
Kind: running statistics in a custom normalization module carry the graph from step to step
Runnable from: bench/leaks/cases/plain_mean_only_batchnorm_running_mean
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MeanOnlyBatchNorm(nn.Module):
    """Subtracts the batch mean (training) or the running mean (evaluation), then scales and shifts."""

    def __init__(self, num_features, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))

    def forward(self, x):
        shape = (1, -1) + (1,) * (x.dim() - 2)
        if self.training:
            mean = x.mean(dim=[0] + list(range(2, x.dim())))
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mean  # leak: LL103
        else:
            mean = self.running_mean
        return (x - mean.view(shape)) * self.weight.view(shape) + self.bias.view(shape)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.norm1 = MeanOnlyBatchNorm(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.norm2 = MeanOnlyBatchNorm(32)
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.norm1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.norm2(self.conv2(x))), 2)
        return self.head(x.mean(dim=(2, 3)))


def main():
    torch.manual_seed(0)
    model = SmallCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(200):
        images = torch.randn(8, 3, 16, 16)
        labels = torch.randint(0, 10, (8,))
        loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(step, loss.item())


if __name__ == "__main__":
    main()
