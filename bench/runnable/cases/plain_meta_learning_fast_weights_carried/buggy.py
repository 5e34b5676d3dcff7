"""Fast weights and the differentiable optimizer state are carried into the next meta-batch with their graph

Source: https://github.com/facebookresearch/higher/issues/10
Style: plain
Kind: state fed into the next step: fast weights never detached between outer iterations
Runnable from: bench/leaks/cases/plain_meta_learning_fast_weights_carried
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def functional_forward(x, weights):
    h = F.relu(F.linear(x, weights[0], weights[1]))
    return F.linear(h, weights[2], weights[3])


def sample_task(n=20):
    amplitude, phase = torch.rand(1) * 4.9 + 0.1, torch.rand(1) * 3.14
    x = torch.rand(n, 1) * 10 - 5
    return x, amplitude * torch.sin(x + phase)


class OnlineMetaLearner(nn.Module):
    """Keeps adapting one set of fast weights across a stream of tasks (continual meta-learning)."""

    def __init__(self):
        super().__init__()
        self.init_weights = nn.ParameterList([
            nn.Parameter(torch.randn(40, 1) * 0.1), nn.Parameter(torch.zeros(40)),
            nn.Parameter(torch.randn(1, 40) * 0.1), nn.Parameter(torch.zeros(1)),
        ])
        self.log_lr = nn.Parameter(torch.tensor(-2.3))
        self.fast = [w.clone() for w in self.init_weights]

    def adapt(self, x, y, steps=3):
        weights = self.fast
        for _ in range(steps):
            loss = F.mse_loss(functional_forward(x, weights), y)
            grads = torch.autograd.grad(loss, weights, create_graph=True)
            weights = [w - self.log_lr.exp() * g for w, g in zip(weights, grads)]
        self.fast = weights  # leak: LL103
        return weights


def main(outer_steps=200):
    torch.manual_seed(0)
    learner = OnlineMetaLearner()
    meta_optimizer = torch.optim.Adam(learner.parameters(), lr=1e-3)
    for step in range(outer_steps):
        x_support, y_support = sample_task()
        x_query, y_query = sample_task()
        weights = learner.adapt(x_support, y_support)
        meta_loss = F.mse_loss(functional_forward(x_query, weights), y_query)
        meta_optimizer.zero_grad()
        meta_loss.backward(retain_graph=True)  # leak: LL104
        meta_optimizer.step()
        if step % 100 == 0:
            print(step, meta_loss.item())


if __name__ == "__main__":
    main()
