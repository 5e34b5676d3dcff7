"""Per-sample-gradient hooks keep appending activations when evaluation runs in training mode

Source: https://github.com/meta-pytorch/opacus/issues/176
Style: plain
Kind: activations collected by hooks into lists
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class GradSampleTracker:
    """Stores each Linear layer's input so per-sample gradients can be computed after backward."""

    def __init__(self, model):
        self.model = model
        for module in model.modules():
            if isinstance(module, nn.Linear):
                module.activations = []
                module.register_forward_hook(self.capture)

    def capture(self, module, inputs, output):
        if module.training:
            module.activations.append(inputs[0])  # leak: LL105

    def per_sample_norms(self):
        norms = []
        for module in self.model.modules():
            if isinstance(module, nn.Linear) and module.activations:
                act = module.activations.pop()
                norms.append(act.norm(dim=1))
        return torch.stack(norms).norm(dim=0)


def main():
    model = nn.Sequential(nn.Linear(100, 256), nn.ReLU(), nn.Linear(256, 2))
    tracker = GradSampleTracker(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train = DataLoader(TensorDataset(torch.randn(4096, 100), torch.randint(0, 2, (4096,))), batch_size=64)
    test = DataLoader(TensorDataset(torch.randn(4096, 100), torch.randint(0, 2, (4096,))), batch_size=64)
    for epoch in range(20):
        for x, y in train:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            clip = 1.0 / tracker.per_sample_norms().clamp(min=1.0)
            for p in model.parameters():
                p.grad.mul_(clip.mean())
            optimizer.step()
        correct = 0
        with torch.no_grad():
            for x, y in test:
                correct += (model(x).argmax(1) == y).sum().item()
        print(epoch, correct / 4096)


if __name__ == "__main__":
    main()
