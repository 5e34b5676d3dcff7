"""Variational online Gauss-Newton optimizer: the GGN running average is built from undetached layer inputs and chains every step's graph

Source: https://github.com/emtiyaz/vadam/pull/2
Style: plain
Kind: a running statistic carries its autograd graph into the next step: the per-example squared gradients are formed from the layer inputs captured by forward hooks, which still require grad, so the optimizer's exponential average of the GGN links each step's graph to the previous one and memory grows linearly with the number of epochs
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class InputRecorder:
    """Keeps the input of every Linear layer so per-example gradients can be formed after backward."""

    def __init__(self, model):
        self.inputs = {}
        for module in model.modules():
            if isinstance(module, nn.Linear):
                module.register_forward_hook(self._save)

    def _save(self, module, args, output):
        self.inputs[module] = args[0].detach()  # the values, not the forward's graph


class VOGN(torch.optim.Optimizer):
    def __init__(self, model, lr=1e-3, beta2=0.999, prior_prec=1.0, data_size=60000):
        self.layers = [m for m in model.modules() if isinstance(m, nn.Linear)]
        params = [m.weight for m in self.layers]
        super().__init__(params, dict(lr=lr, beta2=beta2, prior_prec=prior_prec, data_size=data_size))
        for p in params:
            self.state[p]["ggn_avg"] = torch.zeros_like(p)
            self.state[p]["mu"] = p.detach().clone()

    def step(self, out_grads, recorder):
        group = self.param_groups[0]
        beta2, lr, n = group["beta2"], group["lr"], group["data_size"]
        for layer in self.layers:
            p = layer.weight
            state = self.state[p]
            x = recorder.inputs[layer]
            g_out = out_grads[layer]
            per_example = torch.einsum("bo,bi->boi", g_out, x) * g_out.shape[0]
            ggn = per_example.pow(2).mean(0)
            state["ggn_avg"] = beta2 * state["ggn_avg"] + (1 - beta2) * ggn.detach()
            prec = state["ggn_avg"] + group["prior_prec"] / n
            state["mu"] -= lr * (p.grad + group["prior_prec"] / n * state["mu"]) / prec
            sigma = (1.0 / (n * prec)).sqrt()
            with torch.no_grad():
                p.copy_(state["mu"] + sigma * torch.randn_like(sigma))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 400)
        self.fc2 = nn.Linear(400, 10)

    def forward(self, x):
        h = F.relu(self.fc1(x.flatten(1)))
        return self.fc2(h)


def train(model, loader, epochs=50, device="cuda"):
    model.to(device)
    recorder = InputRecorder(model)
    opt = VOGN(model, data_size=len(loader.dataset))
    for epoch in range(epochs):
        total = 0.0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            outs = {}
            hooks = [l.register_forward_hook(lambda m, a, o: outs.__setitem__(m, o)) for l in opt.layers]
            logits = model(x)
            for h in hooks:
                h.remove()
            loss = F.cross_entropy(logits, y)
            opt.zero_grad()
            grads = torch.autograd.grad(loss, [outs[l] for l in opt.layers], retain_graph=True)
            loss.backward()
            opt.step(dict(zip(opt.layers, grads)), recorder)
            total += loss.item()
        print(f"epoch {epoch}: loss {total / len(loader):.4f}")
