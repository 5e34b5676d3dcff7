"""An L-BFGS line search keeps the closure's loss tensors in a history list

Source: https://github.com/StanfordASL/neural-network-lyapunov/pull/140
Style: plain
Kind: graph kept across steps in a list filled from a closure
Runnable from: bench/leaks/cases/plain_lbfgs_closure_loss_history
"""
import torch
import torch.nn as nn


class LyapunovNet(nn.Module):
    def __init__(self, dim=4, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1) - self.net(torch.zeros_like(x)).squeeze(-1)


def dynamics(x):
    a = torch.tensor([[0.9, 0.1, 0.0, 0.0], [0.0, 0.8, 0.1, 0.0], [0.0, 0.0, 0.95, 0.05], [0.02, 0.0, 0.0, 0.9]])
    return x @ a.t()


def lyapunov_violation(model, samples):
    v = model(samples)
    v_next = model(dynamics(samples))
    positivity = torch.relu(0.01 * samples.norm(dim=1) - v)
    decrease = torch.relu(v_next - v + 0.01 * samples.norm(dim=1))
    return positivity.mean() + decrease.mean()


def train(iterations=100):
    torch.manual_seed(0)
    model = LyapunovNet()
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=20, history_size=3, line_search_fn="strong_wolfe")
    losses = []
    for it in range(iterations):
        samples = torch.empty(256, 4).uniform_(-1, 1)

        def closure():
            optimizer.zero_grad()
            loss = lyapunov_violation(model, samples)
            loss.backward()
            losses.append(loss)  # leak: LL102
            return loss

        optimizer.step(closure)
        if it % 20 == 0:
            print(it, float(losses[-1]))
    return model, losses


if __name__ == "__main__":
    train()
