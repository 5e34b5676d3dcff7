"""A gate computed from the module's own parameters is reused by a branch, then rescaled out of place

Source: https://discuss.pytorch.org/t/when-would-the-error-one-of-the-variables-needed-for-gradient-computation-has-been-modified-occur/11976
Style: plain
Kind: negative: an out-of-place update (x = x * w) of a tensor computed from parameters, with gradients on (an in-place update would break backward)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedResidual(nn.Module):
    """A residual block whose per-channel gate and scale are raw parameters."""

    def __init__(self, channels):
        super().__init__()
        self.proj = nn.Linear(channels, channels)
        self.gate_logits = nn.Parameter(torch.zeros(channels))
        self.gate_scale = nn.Parameter(torch.ones(channels))

    def forward(self, x):
        gate = torch.sigmoid(self.gate_logits)
        branch = F.gelu(self.proj(x)) * gate
        # sigmoid saved its output for backward and the branch used it: gate *= ... would fail there
        gate = gate * self.gate_scale
        return x * gate + branch


def train(steps=200, channels=256, batch=64):
    model = GatedResidual(channels)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(steps):
        x = torch.randn(batch, channels)
        loss = F.mse_loss(model(x), x.flip(1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model


if __name__ == "__main__":
    train()
