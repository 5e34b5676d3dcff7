"""A prioritized replay memory stores per-sample priorities as slices of the batch loss tensor

Source: https://github.com/Kaixhin/Rainbow/pull/33
Style: rl
Kind: device memory grows without a graph: every tree node holds a view that pins a whole batch tensor
"""
import numpy as np
import torch
import torch.nn as nn


class SegmentTree:
    def __init__(self, size):
        self.index, self.size, self.max = 0, size, 1.0
        self.sum_tree = [0.0] * (2 * size - 1)
        self.data = [None] * size

    def _propagate(self, index):
        parent = (index - 1) // 2
        while parent >= 0:
            self.sum_tree[parent] = self.sum_tree[2 * parent + 1] + self.sum_tree[2 * parent + 2]
            parent = (parent - 1) // 2

    def update(self, index, value):
        self.sum_tree[index] = float(value)
        self._propagate(index)
        self.max = max(float(value), self.max)

    def append(self, data, value):
        self.data[self.index] = data
        self.update(self.index + self.size - 1, value)
        self.index = (self.index + 1) % self.size


class ReplayMemory:
    def __init__(self, capacity, priority_exponent=0.5):
        self.transitions = SegmentTree(capacity)
        self.priority_exponent = priority_exponent

    def append(self, transition):
        self.transitions.append(transition, self.transitions.max)

    def sample_idxs(self, batch_size):
        return np.random.randint(0, self.transitions.size, batch_size)

    def update_priorities(self, idxs, priorities):
        priorities = np.power(priorities, self.priority_exponent)
        for idx, priority in zip(idxs, priorities):
            self.transitions.update(idx + self.transitions.size - 1, priority)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    online = nn.Sequential(nn.Linear(84 * 84, 512), nn.ReLU(), nn.Linear(512, 6)).to(device)
    optimizer = torch.optim.Adam(online.parameters(), lr=6.25e-5)
    mem = ReplayMemory(1_000_000)
    for t in range(5_000_000):
        mem.append((np.random.rand(84 * 84).astype(np.float32), np.random.randint(6), np.random.rand()))
        if t > 1000 and t % 4 == 0:
            idxs = mem.sample_idxs(32)
            states = torch.randn(32, 84 * 84, device=device)
            loss = -(online(states).log_softmax(-1)[:, 0])
            optimizer.zero_grad()
            loss.mean().backward()
            optimizer.step()
            mem.update_priorities(idxs, loss.detach().cpu().numpy())
