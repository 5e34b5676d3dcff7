"""An attribution hook object keeps a reference to the last input it saw, long after the explanation

Source: https://github.com/chr5tphr/zennit/pull/13
Style: plain
Kind: a hook's store keeps graph-attached inputs from one call to the next
"""
import torch
import torch.nn as nn


class EpsilonHook:
    """Rewrites the gradient of a Linear/Conv layer into an LRP-epsilon relevance."""

    def __init__(self, epsilon=1e-6):
        self.epsilon = epsilon
        self.input = None
        self.handles = []

    def forward(self, module, inputs, output):
        self.input = inputs[0]
        self.output = output

    def backward(self, module, grad_input, grad_output):
        z = self.output + self.epsilon * torch.sign(self.output)
        relevance = grad_output[0] / z
        contrib = torch.autograd.grad(self.output, self.input, relevance, retain_graph=True)[0]
        result = (self.input * contrib,)
        self.input, self.output = None, None
        return result

    def register(self, module):
        self.handles.append(module.register_forward_hook(self.forward))
        self.handles.append(module.register_full_backward_hook(self.backward))

    def remove(self):
        for handle in self.handles:
            handle.remove()
        self.handles.clear()


class Attributor:
    def __init__(self, model):
        self.model = model
        self.hooks = [EpsilonHook() for m in model.modules() if isinstance(m, (nn.Linear, nn.Conv2d))]

    def __call__(self, x, target):
        layers = [m for m in self.model.modules() if isinstance(m, (nn.Linear, nn.Conv2d))]
        for hook, layer in zip(self.hooks, layers):
            hook.register(layer)
        x = x.clone().requires_grad_(True)
        out = self.model(x)
        (relevance,) = torch.autograd.grad(out, x, torch.eye(out.shape[1])[target].expand_as(out))
        for hook in self.hooks:
            hook.remove()
        return relevance


if __name__ == "__main__":
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(32 * 224 * 224, 1000)).eval()
    attributor = Attributor(model)
    heatmaps = []
    for i in range(1000):
        heatmaps.append(attributor(torch.rand(1, 3, 224, 224), target=i % 1000).sum(1).cpu())
