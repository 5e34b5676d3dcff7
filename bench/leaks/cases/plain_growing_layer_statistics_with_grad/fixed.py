"""Growing an MLP: the input covariance used to add neurons is accumulated from activations that carry the graph

Source: https://github.com/growingnet/gromo/issues/137
Style: plain
Kind: tensors accumulated across a statistics pass with their graph: each batch's x^T x update is built from a stored activation that requires grad and added into a running tensor, keeping every batch's activation alive until the statistic is reset; the stored activation itself keeps the last batch's graph on the module
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class RunningStatistic:
    """Average of a tensor statistic over many batches (e.g. E[x x^T])."""

    def __init__(self, update_fn, name):
        self._update_fn = update_fn
        self.name = name
        self._tensor = None
        self.samples = 0
        self.updated = True

    @torch.no_grad()
    def update(self):
        if self.updated:
            return
        value, n = self._update_fn()
        if self._tensor is None:
            self._tensor = value
        else:
            self._tensor += value
        self.samples += n
        self.updated = True

    def reset(self):
        self._tensor, self.samples = None, 0

    def __call__(self):
        return self._tensor / self.samples


class GrowableLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.layer = nn.Linear(in_features, out_features)
        self.store_input = False
        self.stored_input = None
        self.input_cov = RunningStatistic(self._input_cov_update, name="S")

    def _input_cov_update(self):
        x = self.stored_input
        return torch.einsum("bi,bj->ij", x, x), x.shape[0]

    def forward(self, x):
        if self.store_input:
            self.stored_input = x.detach()
            self.input_cov.updated = False
        return self.layer(x)


class GrowingMLP(nn.Module):
    def __init__(self, d_in=784, hidden=64, n_classes=10):
        super().__init__()
        self.fc1 = GrowableLinear(d_in, hidden)
        self.fc2 = GrowableLinear(hidden, n_classes)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


@torch.no_grad()
def grow_hidden(model, cov, max_new=8):
    """Add as many hidden neurons as the covariance has significant directions (up to max_new)."""
    eigvals = torch.linalg.eigvalsh(cov)
    k = min(max_new, int((eigvals > eigvals.max() * 1e-2).sum()))
    fc1, fc2 = model.fc1.layer, model.fc2.layer
    device = fc1.weight.device
    fc1.weight = nn.Parameter(torch.cat([fc1.weight, 1e-2 * torch.randn(k, fc1.in_features, device=device)]))
    fc1.bias = nn.Parameter(torch.cat([fc1.bias, torch.zeros(k, device=device)]))
    fc2.weight = nn.Parameter(torch.cat([fc2.weight, torch.zeros(fc2.out_features, k, device=device)], dim=1))
    fc1.out_features += k
    fc2.in_features += k
    return k


def compute_statistics(model, loader, device):
    model.fc2.store_input = True
    model.fc2.input_cov.reset()
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        model.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        model.fc2.input_cov.update()
    model.fc2.store_input = False
    return model.fc2.input_cov()


def main(growth_steps=10, epochs_between=2, device="cuda" if torch.cuda.is_available() else "cpu"):
    data = TensorDataset(torch.randn(60000, 784), torch.randint(0, 10, (60000,)))
    loader = DataLoader(data, batch_size=256, shuffle=True, drop_last=True)
    model = GrowingMLP().to(device)
    for step in range(growth_steps):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        for _ in range(epochs_between):
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                optimizer.zero_grad()
                F.cross_entropy(model(x), y).backward()
                optimizer.step()
        cov = compute_statistics(model, loader, device)
        added = grow_hidden(model, cov.detach())
        print(step, added, model.fc1.layer.out_features)


if __name__ == "__main__":
    main()
