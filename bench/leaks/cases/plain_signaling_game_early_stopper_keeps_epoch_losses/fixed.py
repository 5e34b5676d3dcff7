"""Emergent-communication signaling game: a generic trainer hands each epoch's mean losses to an early stopper

Source: https://github.com/facebookresearch/EGG/pull/8
Style: plain
Kind: graph kept across epochs in an early stopper's history: train_epoch returns the sum of the epoch's loss tensors (a graph over every batch), and update_values() appends it to a list that lives for the whole run, so every epoch's autograd graph stays alive (the PR appends .detach()ed losses; it detaches the validation loss too, which is computed under no_grad and carries no graph; the epoch sum of graph-attached losses in train_epoch is itself a leak, detached by a later EGG fix and marked since stop 34)
"""
from typing import Dict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

N_FEATURES = 10
VOCAB = 50


class BaseEarlyStopper:
    def __init__(self):
        self.train_stats = []
        self.validation_stats = []
        self.epoch = 0

    def should_stop(self) -> bool:
        raise NotImplementedError

    def update_values(self, validation_loss, validation_rest: Dict[str, float], train_loss, train_rest: Dict[str, float],
                      epoch: int):
        self.train_stats.append((train_loss.detach(), train_rest))
        self.validation_stats.append((validation_loss.detach(), validation_rest))
        self.epoch = epoch


class EarlyStopperAccuracy(BaseEarlyStopper):
    def __init__(self, threshold: float):
        super().__init__()
        self.threshold = threshold

    def should_stop(self) -> bool:
        return self.validation_stats[-1][1]["acc"] > self.threshold


class SignalingGame(nn.Module):
    """Sender sees a one-hot object and emits one symbol (Gumbel-softmax); receiver must recover the object."""

    def __init__(self, hidden=200, temperature=1.0):
        super().__init__()
        self.sender = nn.Sequential(nn.Linear(N_FEATURES, hidden), nn.ReLU(), nn.Linear(hidden, VOCAB))
        self.embed = nn.Linear(VOCAB, hidden)
        self.receiver = nn.Sequential(nn.ReLU(), nn.Linear(hidden, N_FEATURES))
        self.temperature = temperature

    def forward(self, sender_input, labels):
        logits = self.sender(sender_input)
        message = F.gumbel_softmax(logits, tau=self.temperature, hard=not self.training)
        receiver_output = self.receiver(self.embed(message))
        loss = F.cross_entropy(receiver_output, labels)
        acc = (receiver_output.argmax(dim=1) == labels).float().mean()
        return loss, {"acc": acc.item()}


def _add_dicts(a, b):
    result = dict(a)
    for k, v in b.items():
        result[k] = result.get(k, 0) + v
    return result


class Trainer:
    def __init__(self, game, optimizer, train_data, validation_data, device, early_stopping=None, validation_freq=1):
        self.game = game.to(device)
        self.optimizer = optimizer
        self.train_data, self.validation_data = train_data, validation_data
        self.device, self.early_stopping, self.validation_freq = device, early_stopping, validation_freq
        self.epoch = 0

    def eval(self):
        mean_loss, mean_rest, n_batches = 0.0, {}, 0
        self.game.eval()
        with torch.no_grad():
            for x, y in self.validation_data:
                loss, rest = self.game(x.to(self.device), y.to(self.device))
                mean_loss += loss
                mean_rest = _add_dicts(mean_rest, rest)
                n_batches += 1
        return mean_loss / n_batches, {k: v / n_batches for k, v in mean_rest.items()}

    def train_epoch(self):
        mean_loss, mean_rest, n_batches = 0, {}, 0
        self.game.train()
        for x, y in self.train_data:
            self.optimizer.zero_grad()
            loss, rest = self.game(x.to(self.device), y.to(self.device))
            mean_rest = _add_dicts(mean_rest, rest)
            loss.backward()
            self.optimizer.step()
            n_batches += 1
            mean_loss += loss.detach()
        return mean_loss / n_batches, {k: v / n_batches for k, v in mean_rest.items()}

    def train(self, n_epochs):
        while self.epoch < n_epochs:
            train_loss, train_rest = self.train_epoch()
            self.epoch += 1
            if self.epoch % self.validation_freq == 0:
                validation_loss, rest = self.eval()
                print(f"epoch {self.epoch}: train loss {train_loss.item():.4f}, validation loss {validation_loss.item():.4f}, "
                      f"acc {rest['acc']:.3f}", flush=True)
                if self.early_stopping:
                    self.early_stopping.update_values(validation_loss, rest, train_loss, train_rest, self.epoch)
                    if self.early_stopping.should_stop():
                        break


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    labels = torch.randint(0, N_FEATURES, (100_000,))
    objects = F.one_hot(labels, N_FEATURES).float()
    train_data = DataLoader(TensorDataset(objects[:90_000], labels[:90_000]), batch_size=32, shuffle=True)
    validation_data = DataLoader(TensorDataset(objects[90_000:], labels[90_000:]), batch_size=1000)
    game = SignalingGame()
    trainer = Trainer(game, torch.optim.Adam(game.parameters(), lr=1e-3), train_data, validation_data, device,
                      early_stopping=EarlyStopperAccuracy(0.999))
    trainer.train(n_epochs=1000)
