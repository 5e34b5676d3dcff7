"""An equivariant batch norm updates its running statistics under torch.no_grad()

Source: https://github.com/e3nn/e3nn/issues/414
Style: plain
Kind: negative: running statistics of a custom normalization module updated every step (without graph)
"""
import torch
import torch.nn as nn


class NormBatchNorm(nn.Module):
    def __init__(self, channels, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.weight = nn.Parameter(torch.ones(channels))
        self.register_buffer("running_var", torch.ones(channels))

    def forward(self, x):
        if self.training:
            field_norm = x.pow(2).mean(dim=(0, 2))
            with torch.no_grad():
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * field_norm)
        else:
            field_norm = self.running_var
        return x * (self.weight / (field_norm + self.eps).sqrt())[None, :, None]


class EquivariantNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin1 = nn.Linear(3, 3, bias=False)
        self.norm1 = NormBatchNorm(16)
        self.lin2 = nn.Linear(3, 3, bias=False)
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        x = self.norm1(self.lin1(x))
        x = self.lin2(x)
        return self.head(x.norm(dim=-1))


if __name__ == "__main__":
    model = EquivariantNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(20_000):
        x, y = torch.randn(128, 16, 3), torch.randn(128, 1)
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
