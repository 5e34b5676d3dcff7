"""Fitting one small network per site with a Newton-CG optimizer whose closure uses backward(create_graph=True)

Source: https://github.com/rfeinman/pytorch-minimize/issues/29
Style: plain
Kind: backward(create_graph=True) leaves gradients that carry the graph in every parameter's .grad: parameter -> .grad -> graph -> parameter is a cycle, so each fitted model (and the activations its last graph saved) is never freed when the next site starts
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class NewtonCG(torch.optim.Optimizer):
    """Truncated Newton: solve H d = -g with conjugate gradient using Hessian-vector products."""

    def __init__(self, params, lr=1.0, cg_iters=10, damping=1e-3):
        super().__init__(params, dict(lr=lr, cg_iters=cg_iters, damping=damping))
        self._params = self.param_groups[0]["params"]

    def _flat(self, tensors):
        return torch.cat([t.reshape(-1) for t in tensors])

    def _split(self, flat):
        out, offset = [], 0
        for p in self._params:
            out.append(flat[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
        return out

    @torch.no_grad()
    def step(self, closure):
        group = self.param_groups[0]
        with torch.enable_grad():
            loss = closure()
            grads = torch.autograd.grad(loss, self._params, create_graph=True)
        g = self._flat(grads).detach()

        def hvp(v):
            with torch.enable_grad():
                hv = torch.autograd.grad(grads, self._params, grad_outputs=self._split(v), retain_graph=True)
            return self._flat(hv) + group["damping"] * v

        # conjugate gradient on H d = -g
        d = torch.zeros_like(g)
        r = -g.clone()
        p = r.clone()
        rs = r @ r
        for _ in range(group["cg_iters"]):
            hp = hvp(p)
            alpha = rs / (p @ hp)
            d += alpha * p
            r -= alpha * hp
            rs_new = r @ r
            if rs_new.sqrt() < 1e-6:
                break
            p = r + (rs_new / rs) * p
            rs = rs_new
        for param, step in zip(self._params, self._split(d)):
            param.add_(step, alpha=group["lr"])
        return loss.detach()


class SiteModel(nn.Module):
    def __init__(self, n_features=12, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_features, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def fit_site(x, y, iterations=25):
    model = SiteModel(x.shape[1]).to(x.device)
    optimizer = NewtonCG(model.parameters(), lr=1.0, cg_iters=10)

    def closure():
        optimizer.zero_grad()
        return F.mse_loss(model(x), y)

    for _ in range(iterations):
        loss = optimizer.step(closure)
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    return state, loss.item()


def main(n_sites=500, samples_per_site=20000):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    fitted = {}
    for site in range(n_sites):
        x = torch.randn(samples_per_site, 12, device=device)
        y = torch.sin(x[:, 0]) + 0.1 * torch.randn(samples_per_site, device=device)
        fitted[site], final_loss = fit_site(x, y)
        if site % 20 == 0:
            mem = torch.cuda.memory_allocated() / 2**20 if device == "cuda" else 0.0
            print(f"site {site}: loss {final_loss:.4f}, allocated {mem:.0f} MiB")
    torch.save(fitted, "site_models.pt")


if __name__ == "__main__":
    main()
