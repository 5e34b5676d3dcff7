"""An auxiliary-loss balancer backpropagates each loss with retain_graph=True in a helper's loop

Source: https://github.com/facebookresearch/MetaBalance/issues/2
Style: plain
Kind: retain_graph=True in a helper's loop keeps every graph alive
"""
import torch
import torch.nn as nn


class MultiTaskNet(nn.Module):
    def __init__(self, n_in=64):
        super().__init__()
        self.shared = nn.Sequential(nn.Linear(n_in, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU())
        self.main_head = nn.Linear(128, 1)
        self.aux_heads = nn.ModuleList([nn.Linear(128, 1) for _ in range(3)])

    def forward(self, x):
        h = self.shared(x)
        return self.main_head(h).squeeze(-1), [head(h).squeeze(-1) for head in self.aux_heads]


class GradientBalancer:
    """Scales each auxiliary gradient on the shared layers to a fraction of the main task's norm."""

    def __init__(self, shared_params, relax=0.7):
        self.params = list(shared_params)
        self.relax = relax

    def backward(self, losses):
        grads = []
        for i, loss in enumerate(losses):
            last = i == len(losses) - 1
            grads.append(list(torch.autograd.grad(loss, self.params, retain_graph=not last, allow_unused=False)))
        main_norm = torch.sqrt(sum((g ** 2).sum() for g in grads[0]))
        for i, p in enumerate(self.params):
            total = grads[0][i]
            for aux in grads[1:]:
                aux_norm = torch.sqrt(sum((g ** 2).sum() for g in aux))
                total = total + aux[i] * (main_norm / (aux_norm + 1e-12)) * self.relax
            p.grad = total


def main(steps=20_000):
    model = MultiTaskNet()
    balancer = GradientBalancer(model.shared.parameters())
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(steps):
        x = torch.randn(256, 64)
        y_main, y_aux = torch.randn(256), torch.randn(3, 256)
        main_pred, aux_preds = model(x)
        losses = [nn.functional.mse_loss(main_pred, y_main)]
        losses += [nn.functional.mse_loss(pred, y_aux[i]) for i, pred in enumerate(aux_preds)]
        optimizer.zero_grad()
        balancer.backward(losses)
        optimizer.step()
        if step % 1000 == 0:
            print(step, [round(l.item(), 4) for l in losses])


if __name__ == "__main__":
    main()
