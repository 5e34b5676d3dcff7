"""A distributed Metric averages the training loss with allreduce and keeps the graph

Source: https://github.com/horovod/horovod/pull/641
Style: plain
Kind: graph kept across steps through a metric object's update()
"""
import horovod.torch as hvd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Metric:
    """Average of a value over all workers."""

    def __init__(self, name):
        self.name = name
        self.sum = torch.tensor(0.0)
        self.n = torch.tensor(0.0)

    def update(self, val):
        self.sum += hvd.allreduce(val.cpu(), name=self.name)
        self.n += 1

    @property
    def avg(self):
        return self.sum / self.n


def accuracy(output, target):
    return output.argmax(dim=1).eq(target).float().mean()


def train(epoch, model, loader, optimizer):
    model.train()
    train_loss = Metric("train_loss")
    train_accuracy = Metric("train_accuracy")
    for data, target in loader:
        data, target = data.cuda(), target.cuda()
        optimizer.zero_grad()
        output = model(data)
        loss = F.cross_entropy(output, target)
        loss.backward()
        optimizer.step()
        train_accuracy.update(accuracy(output, target))
        train_loss.update(loss.detach())
    if hvd.rank() == 0:
        print(f"epoch {epoch}: loss {train_loss.avg.item():.4f} acc {train_accuracy.avg.item():.4f}")


def main():
    hvd.init()
    torch.cuda.set_device(hvd.local_rank())
    dataset = TensorDataset(torch.randn(50000, 3, 32, 32), torch.randint(0, 100, (50000,)))
    sampler = DistributedSampler(dataset, num_replicas=hvd.size(), rank=hvd.rank())
    loader = DataLoader(dataset, batch_size=128, sampler=sampler)
    model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 100)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0125 * hvd.size(), momentum=0.9)
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    for epoch in range(90):
        sampler.set_epoch(epoch)
        train(epoch, model, loader, optimizer)


if __name__ == "__main__":
    main()
