"""A tracking trainer hands loss tensors to a dict of meters in _update_stats

Source: https://github.com/visionml/pytracking/pull/313
Style: plain
Kind: graph kept across steps through a statistics object's update()
"""
from collections import OrderedDict

import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val, self.avg, self.sum, self.count = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class IoUNetActor:
    """Runs the network on a batch and returns the loss and the numbers to report."""

    def __init__(self, net, objective):
        self.net = net
        self.objective = objective

    def __call__(self, data):
        iou_pred = self.net(data["features"])
        loss = self.objective(iou_pred, data["iou_target"])
        stats = {"Loss/total": loss, "Loss/iou": loss.clone(), "Pred/mean": iou_pred.mean()}
        return loss, stats


class TrackerTrainer:
    def __init__(self, actor, optimizer, loader):
        self.actor = actor
        self.optimizer = optimizer
        self.loader = loader
        self.stats = OrderedDict()

    def _update_stats(self, new_stats, batch_size):
        for name, val in new_stats.items():
            if name not in self.stats:
                self.stats[name] = AverageMeter()
            val = val.item() if torch.is_tensor(val) else val
            self.stats[name].update(val, batch_size)

    def cycle_dataset(self, epoch):
        for i in range(len(self.loader)):
            data = self.loader[i]
            loss, stats = self.actor(data)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self._update_stats(stats, data["features"].shape[0])
            if i % 20 == 0:
                line = ", ".join(f"{k}: {float(m.avg):.4f}" for k, m in self.stats.items())
                print(f"[{epoch}: {i}] {line}")


def make_batches(n=200, batch=32, dim=256):
    return [{"features": torch.randn(batch, dim), "iou_target": torch.rand(batch, 1)} for _ in range(n)]


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 1), nn.Sigmoid())
    actor = IoUNetActor(net, nn.MSELoss())
    trainer = TrackerTrainer(actor, torch.optim.Adam(net.parameters(), lr=1e-3), make_batches())
    for epoch in range(5):
        trainer.cycle_dataset(epoch)
