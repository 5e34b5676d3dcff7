"""A DQN agent selects actions under torch.no_grad() and its replay memory stores plain tensors

Source: https://pytorch.org/tutorials/intermediate/reinforcement_q_learning.html
Style: rl
Kind: negative: transitions appended to a replay buffer's deque every step (no graph attached)
"""
import math
import random
from collections import deque, namedtuple

import torch
import torch.nn as nn

Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))


class ReplayMemory:
    def __init__(self, capacity):
        self.memory = deque([], maxlen=capacity)

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)

    def __len__(self):
        return len(self.memory)


policy_net = nn.Sequential(nn.Linear(4, 128), nn.ReLU(), nn.Linear(128, 2))
target_net = nn.Sequential(nn.Linear(4, 128), nn.ReLU(), nn.Linear(128, 2))
target_net.load_state_dict(policy_net.state_dict())
optimizer = torch.optim.AdamW(policy_net.parameters(), lr=1e-4, amsgrad=True)
memory = ReplayMemory(10_000)
steps_done = 0


def select_action(state):
    global steps_done
    eps = 0.05 + 0.85 * math.exp(-1.0 * steps_done / 1000)
    steps_done += 1
    if random.random() > eps:
        with torch.no_grad():
            return policy_net(state).max(1).indices.view(1, 1)
    return torch.tensor([[random.randrange(2)]], dtype=torch.long)


def optimize_model(batch_size=128, gamma=0.99):
    if len(memory) < batch_size:
        return
    batch = Transition(*zip(*memory.sample(batch_size)))
    state, action, reward = torch.cat(batch.state), torch.cat(batch.action), torch.cat(batch.reward)
    next_state = torch.cat(batch.next_state)
    q = policy_net(state).gather(1, action)
    with torch.no_grad():
        target = reward + gamma * target_net(next_state).max(1).values
    loss = nn.functional.smooth_l1_loss(q, target.unsqueeze(1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


if __name__ == "__main__":
    for episode in range(600):
        state = torch.randn(1, 4)
        for t in range(500):
            action = select_action(state)
            next_state, reward = torch.randn(1, 4), torch.tensor([1.0])
            memory.push(state, action, next_state, reward)
            state = next_state
            optimize_model()
