"""DeepLIFT hooks store each module's detached input and output on the module; clearing the hooks leaves them there

Source: https://github.com/jmschrei/tangermeme/pull/84
Style: plain
Kind: activations stored by hooks as module attributes survive hook removal: one copy per module per model stays on the GPU
"""
import torch
import torch.nn as nn


def _forward_hook(module, inputs, output):
    module.input = inputs[0].clone().detach()  # leak: new:hook-store-not-cleared
    module.output = output.clone().detach()  # leak: new:hook-store-not-cleared


def _add_hooks(model):
    handles = []
    for module in model.modules():
        if isinstance(module, (nn.ReLU, nn.ELU, nn.Sigmoid, nn.Softplus)):
            handles.append(module.register_forward_hook(_forward_hook))
    return handles


def _clear_hooks(handles):
    for handle in handles:
        handle.remove()


def deep_lift_shap(model, x, references, target=0):
    handles = _add_hooks(model)
    try:
        x = x.clone().requires_grad_(True)
        refs = references.clone().requires_grad_(True)
        both = torch.cat([x, refs])
        out = model(both)[:, target]
        grads = torch.autograd.grad(out.sum(), both)[0]
        attr = (grads[: len(x)] * (x - refs.mean(0, keepdim=True))).detach()
    finally:
        _clear_hooks(handles)
    return attr


class BPNetLike(nn.Module):
    def __init__(self, filters=256, layers=8, length=2114):
        super().__init__()
        self.iconv = nn.Conv1d(4, filters, 21, padding=10)
        self.irelu = nn.ReLU()
        self.rconvs = nn.ModuleList(nn.Conv1d(filters, filters, 3, padding=2 ** i, dilation=2 ** i) for i in range(1, layers + 1))
        self.rrelus = nn.ModuleList(nn.ReLU() for _ in range(layers))
        self.head = nn.Linear(filters, 1)

    def forward(self, x):
        h = self.irelu(self.iconv(x))
        for conv, relu in zip(self.rconvs, self.rrelus):
            h = h + relu(conv(h))
        return self.head(h.mean(-1))


def one_hot(n, length, device):
    idx = torch.randint(0, 4, (n, length), device=device)
    return torch.nn.functional.one_hot(idx, 4).transpose(1, 2).float()


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    seqs = one_hot(64, 2114, device)
    refs = one_hot(20, 2114, device)
    models = [BPNetLike().to(device).eval() for _ in range(10)]  # one model per cross-validation fold
    attributions = []
    for fold, model in enumerate(models):
        attributions.append(deep_lift_shap(model, seqs, refs).cpu())
        print(fold, torch.cuda.memory_allocated() if device == "cuda" else 0)
    with torch.no_grad():
        ensemble = torch.stack([m(seqs) for m in models]).mean(0)
    print(torch.stack(attributions).mean(0).shape, ensemble.shape)
