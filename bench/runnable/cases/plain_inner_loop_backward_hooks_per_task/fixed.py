"""A MAML inner loop registers a gradient-norm backward hook on the meta-model's layers for every task

Source: https://github.com/facebookresearch/higher/issues/75
Style: plain
Kind: hooks registered in a per-task helper, never removed
Runnable from: bench/leaks/cases/plain_inner_loop_backward_hooks_per_task
"""
import torch
import torch.nn as nn


def gradient_norm_hook(norms):
    def hook(module, grad_in, grad_out):
        norms.append(grad_out[0].norm().item())
    return hook


def adapt_and_evaluate(model, support, query, inner_steps=2, inner_lr=0.1):
    norms = []
    handles = [module.register_full_backward_hook(gradient_norm_hook(norms))
               for module in model.modules() if isinstance(module, nn.Linear)]
    fast = nn.Sequential(*[type(m)(m.in_features, m.out_features) if isinstance(m, nn.Linear) else m for m in model])
    fast.load_state_dict(model.state_dict())
    params = list(fast.parameters())
    x_s, y_s = support
    for _ in range(inner_steps):
        loss = nn.functional.cross_entropy(fast(x_s), y_s)
        grads = torch.autograd.grad(loss, params, create_graph=True)
        for p, g in zip(params, grads):
            p.data = p.data - inner_lr * g.data
    x_q, y_q = query
    meta_loss = nn.functional.cross_entropy(fast(x_q), y_q) + 1e-3 * nn.functional.cross_entropy(model(x_q), y_q)
    meta_loss.backward()
    for handle in handles:
        handle.remove()
    return meta_loss.item(), sum(norms) / max(len(norms), 1)


def sample_task(n_way=5, k_shot=5, dim=64):
    centers = torch.randn(n_way, dim)
    def draw(k):
        labels = torch.arange(n_way).repeat_interleave(k)
        return centers[labels] + 0.3 * torch.randn(len(labels), dim), labels
    return draw(k_shot), draw(15)


if __name__ == "__main__":
    torch.manual_seed(0)
    hidden = [layer for _ in range(7) for layer in (nn.Linear(128, 128), nn.ReLU())]
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), *hidden, nn.Linear(128, 5))
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for it in range(200):
        support, query = sample_task()
        loss, grad_norm = adapt_and_evaluate(model, support, query)
        meta_opt.step()
        meta_opt.zero_grad()
