"""A module registers a forward hook closure that calls back into self; rebuilt modules are never freed

Source: https://github.com/pytorch/pytorch/issues/46386
Style: plain
Kind: a forward hook closure captures its own module (a reference cycle per instance)
"""
import torch
import torch.nn as nn
import torchvision.models as models


class ConsistencyWrapped(nn.Module):
    """Runs a second pass through the backbone on the hooked input to compute a consistency target."""

    def __init__(self):
        super().__init__()
        self.resnet = models.resnet50()
        self.last_consistency = None

        def fw_hook(module, module_in, module_out):
            with torch.no_grad():
                self.last_consistency = (self.resnet.fc(module_out.flatten(1)) - 0).abs().mean()

        self.resnet.avgpool.register_forward_hook(fw_hook)  # leak: new:hook-self-cycle

    def forward(self, x):
        return self.resnet(x)


def evaluate_seed(seed, device):
    torch.manual_seed(seed)
    net = ConsistencyWrapped().to(device).eval()
    with torch.no_grad():
        out = net(torch.rand(8, 3, 224, 224, device=device))
    return out.softmax(-1).max(-1).values.mean().item(), float(net.last_consistency)


if __name__ == "__main__":
    device = "cuda:0" if torch.cuda.is_available() else "cpu"
    for seed in range(1000):
        conf, consistency = evaluate_seed(seed, device)
        if seed % 50 == 0:
            print(seed, conf, consistency, torch.cuda.memory_allocated() if torch.cuda.is_available() else 0)
