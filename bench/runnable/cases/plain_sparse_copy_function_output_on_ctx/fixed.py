"""A sparse-network layer's custom copy Function keeps its output features as a ctx attribute

Source: https://github.com/pytorch/pytorch/issues/5569
Style: plain
Kind: an output stored on an autograd ctx instead of save_for_backward: out -> grad_fn -> ctx -> out is a cycle, so every call's output stays allocated
Runnable from: bench/leaks/cases/plain_sparse_copy_function_output_on_ctx
"""
import torch
import torch.nn as nn
from torch.autograd import Function


class FeatureCopy(Function):
    """Copies the active-site features of a sparse tensor; the weight takes part only so that the
    layer shows up in the graph (its gradient is computed by the next layer)."""

    @staticmethod
    def forward(ctx, input_features, weight):
        output_features = input_features.clone()
        ctx.save_for_backward(output_features)
        return output_features

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


class SparseBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels, channels) / channels ** 0.5)
        self.mix = nn.Linear(channels, channels)

    def forward(self, features):
        copied = FeatureCopy.apply(features, self.weight)
        return torch.relu(self.mix(copied @ self.weight))


def main(steps=200):
    torch.manual_seed(0)
    block = SparseBlock(64)
    optimizer = torch.optim.SGD(block.parameters(), lr=1e-3)
    for step in range(steps):
        active_sites = torch.rand(256, 64, requires_grad=True)
        loss = block(active_sites).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(step, loss.item())


if __name__ == "__main__":
    main()
