"""A DQN learner returns loss tensors that the agent queues up for a delayed wandb.log

Source: https://github.com/cyoon1729/RLcycle/pull/10
Style: rl
Kind: graph kept across steps in a list of logging tuples
Runnable from: bench/leaks/cases/rl_loss_info_tuples_for_wandb
"""
import random

import torch
import torch.nn as nn


class QNetwork(nn.Module):
    def __init__(self, obs_dim=8, n_actions=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, n_actions))

    def forward(self, obs):
        return self.net(obs)


class DQNLearner:
    def __init__(self, gamma=0.99):
        self.network, self.target = QNetwork(), QNetwork()
        self.target.load_state_dict(self.network.state_dict())
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=1e-4)
        self.gamma = gamma

    def update_model(self, batch):
        obs, actions, rewards, next_obs, dones = batch
        q = self.network(obs).gather(1, actions[:, None]).squeeze(1)
        with torch.no_grad():
            target = rewards + self.gamma * (1 - dones) * self.target(next_obs).max(1).values
        element_wise_loss = nn.functional.smooth_l1_loss(q, target, reduction="none")
        loss = element_wise_loss.mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss, q.mean(), element_wise_loss


def sample(batch_size=64):
    return (torch.randn(batch_size, 8), torch.randint(0, 4, (batch_size,)), torch.randn(batch_size),
            torch.randn(batch_size, 8), (torch.rand(batch_size) < 0.05).float())


def log(metrics, step):
    print(step, metrics)


def train(total_steps=200, log_every=1000):
    torch.manual_seed(0)
    learner = DQNLearner()
    pending = []
    for step in range(total_steps):
        info = learner.update_model(sample())
        pending.append(info)  # leak: LL102
        if step % log_every == 0:
            log({"loss": sum(float(i[0]) for i in pending) / len(pending),
                 "mean_q": sum(float(i[1]) for i in pending) / len(pending)}, step=step)
        if step % 10_000 == 0:
            learner.target.load_state_dict(learner.network.state_dict())
        if random.random() < 1e-5:
            print("checkpoint", step)


if __name__ == "__main__":
    train()
