"""PPO rollouts call the agent through a step() method that already runs under torch.no_grad()

Source: https://github.com/sidhantls/ppo_lightning/issues/5
Style: rl
Kind: negative: rollout forwards with graph-free outputs stored for the update
"""
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=8, n_actions=4, hidden=64):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, n_actions))
        self.v = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def step(self, obs):
        with torch.no_grad():
            dist = Categorical(logits=self.pi(obs))
            action = dist.sample()
            return action, dist.log_prob(action), self.v(obs).squeeze(-1)


def collect(agent, steps=2048):
    buffer = {"obs": [], "act": [], "logp": [], "val": [], "rew": []}
    obs = torch.randn(8)
    for _ in range(steps):
        action, logp, value = agent.step(obs)
        buffer["obs"].append(obs)
        buffer["act"].append(action)
        buffer["logp"].append(logp)
        buffer["val"].append(value)
        buffer["rew"].append(float(np.random.rand()))
        obs = torch.randn(8)
    return {k: torch.stack(v) if k != "rew" else torch.tensor(v) for k, v in buffer.items()}


def update(agent, optimizer, batch, clip=0.2, epochs=10):
    adv = batch["rew"] - batch["val"]
    for _ in range(epochs):
        dist = Categorical(logits=agent.pi(batch["obs"]))
        ratio = torch.exp(dist.log_prob(batch["act"]) - batch["logp"])
        loss = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
        loss = loss + 0.5 * ((agent.v(batch["obs"]).squeeze(-1) - batch["rew"]) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    agent = ActorCritic()
    optimizer = torch.optim.Adam(agent.parameters(), lr=3e-4)
    for epoch in range(1000):
        update(agent, optimizer, collect(agent))
