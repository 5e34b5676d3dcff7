"""A RunningAverage metric smooths the raw loss tensor returned by the update function

Source: https://github.com/pytorch/ignite/pull/943
Style: plain
Kind: EMA of the loss kept with its graph across iterations
Runnable from: bench/leaks/cases/plain_running_average_metric_ema
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class RunningAverage:
    """Exponential moving average of whatever the training step returns."""

    def __init__(self, alpha=0.98):
        self.alpha = alpha
        self.value = None

    def update(self, output):
        if self.value is None:
            self.value = output
        else:
            self.value = self.value * self.alpha + (1.0 - self.alpha) * output

    def compute(self):
        return float(self.value)


class Engine:
    def __init__(self, process_function):
        self.process_function = process_function
        self.handlers = []

    def on_iteration_completed(self, handler):
        self.handlers.append(handler)

    def run(self, loader, max_epochs):
        for epoch in range(max_epochs):
            for iteration, batch in enumerate(loader):
                output = self.process_function(batch)
                for handler in self.handlers:
                    handler(epoch, iteration, output)


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    avg_loss = RunningAverage()

    def train_step(batch):
        x, y = batch
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x).squeeze(-1), y)
        loss.backward()
        optimizer.step()
        return loss

    def log(epoch, iteration, output):
        avg_loss.update(output)  # leak: LL101
        if iteration % 100 == 0:
            print(f"epoch {epoch} iter {iteration}: {avg_loss.compute():.4f}")

    engine = Engine(train_step)
    engine.on_iteration_completed(log)
    data = TensorDataset(torch.randn(6400, 20), torch.randn(6400))
    engine.run(DataLoader(data, batch_size=32, shuffle=True), max_epochs=1)


if __name__ == "__main__":
    main()
