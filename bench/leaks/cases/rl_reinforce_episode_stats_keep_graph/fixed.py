"""REINFORCE agent on object-centric Atari features: per-episode statistics are tracked as graph-attached tensors

Source: https://github.com/k4ntz/SCoBots/pull/4
Style: rl
Kind: graph kept across steps in a container: the policy loss and the summed policy entropy of every episode are appended to the run's statistics lists without detaching; the entropy is only monitored, never backpropagated, so each entry keeps its episode's per-step entropy graph (with the logits and probabilities it saved), and the loss entries keep their autograd nodes, for the rest of training
"""
import csv
import time

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical


class ConceptPolicy(nn.Module):
    def __init__(self, n_features, n_actions, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_features, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, n_actions))

    def forward(self, obs):
        return Categorical(logits=self.net(obs))


def discounted_returns(rewards, gamma):
    out, running = [], 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        out.append(running)
    out.reverse()
    ret = torch.tensor(out, dtype=torch.float32)
    return (ret - ret.mean()) / (ret.std() + 1e-8)


def train(env_id="ALE/Pong-v5", episodes=20000, gamma=0.99, lr=1e-3, device="cuda"):
    env = gym.make(env_id, obs_type="ram")
    policy = ConceptPolicy(env.observation_space.shape[0], env.action_space.n).to(device)
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    stats = {"return": [], "length": [], "policy_loss": [], "entropy": [], "env_time": [], "backprop_time": []}
    for episode in range(episodes):
        obs, _ = env.reset(seed=episode)
        log_probs, entropies, rewards = [], [], []
        t0, done = time.time(), False
        while not done:
            dist = policy(torch.as_tensor(obs, dtype=torch.float32, device=device) / 255.0)
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            entropies.append(dist.entropy())
            obs, reward, terminated, truncated, _ = env.step(action.item())
            rewards.append(float(reward))
            done = terminated or truncated
        t1 = time.time()
        returns = discounted_returns(rewards, gamma).to(device)
        entropy_sum = torch.stack(entropies).sum()
        policy_loss = -(torch.stack(log_probs) * returns).sum()
        opt.zero_grad()
        policy_loss.backward()
        opt.step()
        stats["return"].append(sum(rewards))
        stats["length"].append(len(rewards))
        stats["policy_loss"].append(policy_loss.item())
        stats["entropy"].append(entropy_sum.item())
        stats["env_time"].append(t1 - t0)
        stats["backprop_time"].append(time.time() - t1)
        if episode % 100 == 0:
            print(f"episode {episode}: mean return {np.mean(stats['return'][-100:]):.2f}")
    with open("reinforce_stats.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(list(stats))
        for row in zip(*stats.values()):
            writer.writerow([float(v) for v in row])
