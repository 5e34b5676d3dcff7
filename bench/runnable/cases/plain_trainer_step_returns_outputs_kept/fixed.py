"""A generic PyTorch trainer returns y_hat from its training step and the epoch loop keeps every one

Source: https://github.com/Quantinuum/lambeq/pull/251
Style: plain
Kind: graph kept across steps: model outputs returned by a step method and collected for the epoch
Runnable from: bench/leaks/cases/plain_trainer_step_returns_outputs_kept
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class PytorchTrainer:
    def __init__(self, model, loss_function, optimizer, evaluate_functions):
        self.model, self.loss_function, self.optimizer = model, loss_function, optimizer
        self.evaluate_functions = evaluate_functions
        self.train_costs = []

    def training_step(self, batch):
        x, y = batch
        y_hat = self.model(x)
        loss = self.loss_function(y_hat, y)
        self.train_costs.append(loss.item())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return y_hat, loss.item()

    def fit(self, train_loader, epochs):
        for epoch in range(epochs):
            epoch_preds, epoch_labels = [], []
            for batch in train_loader:
                y_hat, _ = self.training_step(batch)
                epoch_preds.append(y_hat.detach())
                epoch_labels.append(batch[1])
            preds, labels = torch.cat(epoch_preds), torch.cat(epoch_labels)
            scores = {name: fn(preds, labels) for name, fn in self.evaluate_functions.items()}
            print(epoch, {k: float(v) for k, v in scores.items()})


def accuracy(y_hat, y):
    return ((y_hat > 0.5).float() == y).float().mean()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.Tanh(), nn.Linear(128, 1), nn.Sigmoid())
    trainer = PytorchTrainer(model, nn.BCELoss(), torch.optim.AdamW(model.parameters(), lr=3e-3), {"acc": accuracy})
    data = TensorDataset(torch.randn(6400, 64), torch.randint(0, 2, (6400, 1)).float())
    trainer.fit(DataLoader(data, batch_size=32, shuffle=True), epochs=1)
