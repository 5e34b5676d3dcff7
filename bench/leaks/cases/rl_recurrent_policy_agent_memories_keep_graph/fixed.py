"""Recurrent PPO policy for a multi-agent simulator keeps each agent's LSTM memory between decisions with its autograd graph

Source: https://github.com/Unity-Technologies/ml-agents/pull/5048
Style: rl
Kind: state fed into the next step: the policy stores every agent's new (h, c) memory on itself straight from the LSTM output, so each decision's graph is chained to the next one through the stored memory; over a long episode the chained graph explodes in size
"""
import numpy as np
import torch
import torch.nn as nn

OBS_DIM = 24
N_ACTIONS = 5
MEMORY = 128


class RecurrentActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(OBS_DIM, 128), nn.ReLU())
        self.lstm = nn.LSTMCell(128, MEMORY)
        self.pi = nn.Linear(MEMORY, N_ACTIONS)
        self.v = nn.Linear(MEMORY, 1)

    def forward(self, obs, h, c):
        h, c = self.lstm(self.encoder(obs), (h, c))
        return self.pi(h), self.v(h).squeeze(-1), h, c


class AgentPolicy:
    def __init__(self, device="cpu"):
        self.net = RecurrentActorCritic().to(device)
        self.device = device
        self.memories = {}

    def _recall(self, agent_ids):
        zeros = torch.zeros(2, MEMORY, device=self.device)
        stacked = torch.stack([self.memories.get(a, zeros) for a in agent_ids])
        return stacked[:, 0], stacked[:, 1]

    def act(self, agent_ids, obs):
        h, c = self._recall(agent_ids)
        # The PR detaches the stored memory; every value act() returns is detached too, so the
        # rollout forward needs no graph at all.
        with torch.no_grad():
            logits, value, h, c = self.net(torch.as_tensor(obs, device=self.device), h, c)
        dist = torch.distributions.Categorical(logits=logits)
        actions = dist.sample()
        for i, agent in enumerate(agent_ids):
            self.memories[agent] = torch.stack([h[i], c[i]]).detach()
        return actions.cpu().numpy(), dist.log_prob(actions).detach().cpu().numpy(), value.detach().cpu().numpy()

    def forget(self, agent_ids):
        for agent in agent_ids:
            self.memories.pop(agent, None)


def collect(policy, n_agents=16, steps=100000, episode_len=5000, seed=0):
    rng = np.random.default_rng(seed)
    agent_ids = list(range(n_agents))
    trajectory = []
    for step in range(steps):
        obs = rng.standard_normal((n_agents, OBS_DIM)).astype(np.float32)
        actions, logp, values = policy.act(agent_ids, obs)
        rewards = rng.standard_normal(n_agents).astype(np.float32)
        trajectory.append((obs, actions, logp, values, rewards))
        if (step + 1) % episode_len == 0:
            policy.forget(agent_ids)
            print(f"step {step + 1}: episode done, mean reward {np.mean([t[4] for t in trajectory[-episode_len:]]):.3f}")
        if len(trajectory) > 2048:
            trajectory = trajectory[-2048:]
    return trajectory


if __name__ == "__main__":
    collect(AgentPolicy("cuda" if torch.cuda.is_available() else "cpu"))
