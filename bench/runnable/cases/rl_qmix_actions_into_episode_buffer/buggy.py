"""A multi-agent episode runner stores graph-attached actions in the replay buffer, and the logger keeps every stat

Source: https://github.com/oxwhirl/pymarl/pull/73
Style: rl
Kind: graph kept across episodes through a replay buffer's method and a logger's dict of lists
Runnable from: bench/leaks/cases/rl_qmix_actions_into_episode_buffer
Run: --step __main__:EpisodeRunner.run
"""
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn


class AgentNet(nn.Module):
    def __init__(self, obs_dim=30, n_actions=9, hidden=64):
        super().__init__()
        self.fc = nn.Linear(obs_dim, hidden)
        self.rnn = nn.GRUCell(hidden, hidden)
        self.q = nn.Linear(hidden, n_actions)

    def forward(self, obs, h):
        h = self.rnn(torch.relu(self.fc(obs)), h)
        return self.q(h), h


class EpisodeBatch:
    def __init__(self):
        self.data = defaultdict(list)

    def update(self, transition):
        for key, value in transition.items():
            self.data[key].append(value)


class ReplayBuffer:
    def __init__(self, capacity=4):
        self.episodes, self.capacity = [], capacity

    def insert_episode_batch(self, batch):
        self.episodes.append(batch)
        self.episodes = self.episodes[-self.capacity:]


class Logger:
    def __init__(self):
        self.stats = defaultdict(list)

    def log_stat(self, key, value, t):
        self.stats[key].append((t, value))  # leak: LL102


class EpisodeRunner:
    def __init__(self, agent, n_agents=8, epsilon=0.05):
        self.agent, self.n_agents, self.epsilon = agent, n_agents, epsilon

    def run(self, episode_limit=10):
        batch = EpisodeBatch()
        h = torch.zeros(self.n_agents, 64)
        for t in range(episode_limit):
            obs = torch.randn(self.n_agents, 30)
            q, h = self.agent(obs, h)
            actions = q.argmax(-1)
            if np.random.rand() < self.epsilon:
                actions = torch.randint(0, 9, (self.n_agents,))
            batch.update({"obs": obs, "actions": actions, "agent_outs": q, "reward": float(np.random.rand())})  # leak: LL102
        return batch, q.max(-1).values.mean()


if __name__ == "__main__":
    torch.manual_seed(0)
    np.random.seed(0)
    runner, buffer, logger = EpisodeRunner(AgentNet()), ReplayBuffer(), Logger()
    for episode in range(100):
        episode_batch, q_taken_mean = runner.run()
        buffer.insert_episode_batch(episode_batch)
        logger.log_stat("q_taken_mean", q_taken_mean, episode)
