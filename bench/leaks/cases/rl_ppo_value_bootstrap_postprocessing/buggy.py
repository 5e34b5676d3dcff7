"""PPO post-processing bootstraps the last value with autograd recording and stores it in the sample batch

Source: https://github.com/ray-project/ray/pull/7238
Source: https://github.com/ray-project/ray/issues/6962
Style: rl
Kind: value bootstrap in RL post-processing records a graph nobody uses
"""
import numpy as np
import torch
import torch.nn as nn


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=84 * 84, n_actions=6):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 512), nn.ReLU())
        self.pi = nn.Linear(512, n_actions)
        self.v = nn.Linear(512, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)

    def value(self, obs):
        _, v = self.forward(obs)
        return v


def compute_advantages(rewards, values, last_r, gamma=0.99, lam=0.95):
    values = torch.cat([values, last_r.reshape(1)])
    advantages = torch.zeros_like(rewards)
    gae = 0.0
    for t in reversed(range(len(rewards))):
        delta = rewards[t] + gamma * values[t + 1] - values[t]
        gae = delta + gamma * lam * gae
        advantages[t] = gae
    return advantages, advantages + values[:-1]


def postprocess_trajectory(policy, batch):
    last_obs = torch.as_tensor(batch["new_obs"][-1])
    last_r = policy.value(last_obs.unsqueeze(0))[0]  # leak: LL201
    values = torch.as_tensor(batch["vf_preds"])
    adv, targets = compute_advantages(torch.as_tensor(batch["rewards"]), values, last_r)
    batch["advantages"], batch["value_targets"] = adv, targets
    return batch


def rollout(policy, horizon=200):
    obs = np.random.rand(horizon, 84 * 84).astype(np.float32)
    with torch.no_grad():
        _, vf = policy(torch.as_tensor(obs))
    return {"obs": obs, "new_obs": np.roll(obs, -1, axis=0), "rewards": np.random.rand(horizon).astype(np.float32),
            "vf_preds": vf.numpy()}


if __name__ == "__main__":
    policy = ActorCritic()
    optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
    samples = []
    for iteration in range(10_000):
        batch = postprocess_trajectory(policy, rollout(policy))
        samples.append(batch)
        if len(samples) == 8:
            obs = torch.as_tensor(np.concatenate([b["obs"] for b in samples]))
            targets = torch.cat([b["value_targets"] for b in samples]).detach()
            loss = nn.functional.mse_loss(policy.value(obs), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            samples.clear()
