"""COMA builds the joint-action policy table with a cross product of agent policies, with autograd on, every step

Source: https://github.com/Bigpig4396/PyTorch-Counterfactual-Multi-Agent-Policy-Gradients-COMA/issues/4
Style: rl
Kind: graph kept across steps: each step's joint-policy table (built from the actors' outputs with grad) is stored in the episode memory
"""
from collections import deque

import numpy as np
import torch
import torch.nn as nn


class Actor(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 128), nn.ReLU(), nn.Linear(128, n_actions))

    def forward(self, obs):
        return torch.softmax(self.net(obs), dim=-1)


class Critic(nn.Module):
    def __init__(self, state_dim, n_agents, n_actions):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(state_dim + n_agents * n_actions, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, state, joint_actions):
        return self.net(torch.cat([state, joint_actions], dim=-1))


def cross_prod(probs):
    """Probability of every joint action: outer product of the agents' policies, flattened."""
    table = probs[0]
    for p in probs[1:]:
        table = (table.unsqueeze(-1) * p).flatten()
    return table


class COMA:
    def __init__(self, n_agents=2, obs_dim=18, n_actions=5, gamma=0.99):
        self.actors = [Actor(obs_dim, n_actions) for _ in range(n_agents)]
        self.critic = Critic(obs_dim * n_agents, n_agents, n_actions)
        params = [p for a in self.actors for p in a.parameters()]
        self.actor_opt = torch.optim.Adam(params, lr=1e-4)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.n_agents, self.n_actions, self.gamma = n_agents, n_actions, gamma
        self.joint_actions = torch.eye(n_actions ** n_agents)
        self.memory = {"obs": [], "actions": [], "rewards": []}
        self.pi_history = deque(maxlen=200_000)  # joint policies of recent steps, for the exploration report

    def get_actions(self, obs):
        with torch.no_grad():
            probs = [actor(torch.as_tensor(o, dtype=torch.float32)) for actor, o in zip(self.actors, obs)]
            joint_pi = cross_prod(probs)
        self.pi_history.append(joint_pi)
        return [int(torch.multinomial(p, 1)) for p in probs]

    def train(self):
        obs = torch.as_tensor(np.array(self.memory["obs"]), dtype=torch.float32).flatten(1)
        actions = torch.as_tensor(self.memory["actions"])
        rewards = torch.as_tensor(self.memory["rewards"], dtype=torch.float32)
        returns = torch.zeros_like(rewards)
        running = 0.0
        for t in reversed(range(len(rewards))):
            running = rewards[t] + self.gamma * running
            returns[t] = running
        one_hot = torch.nn.functional.one_hot(actions, self.n_actions).float().flatten(1)
        q_taken = self.critic(obs, one_hot).squeeze(-1)
        critic_loss = ((q_taken - returns) ** 2).mean()
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        log_pi = sum(torch.log(self.actors[i](obs.view(len(obs), self.n_agents, -1)[:, i]).gather(1, actions[:, i:i + 1]))
                     for i in range(self.n_agents)).squeeze(-1)
        actor_loss = -(log_pi * (returns - q_taken.detach())).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
        for key in ("obs", "actions", "rewards"):
            self.memory[key].clear()

    def exploration_report(self):
        recent = torch.stack(list(self.pi_history)[-10_000:])
        entropy = -(recent * torch.log(recent + 1e-12)).sum(-1).mean()
        return float(entropy)


def find_goals_env_step(obs, actions, rng):
    next_obs = [o + 0.01 * rng.standard_normal(o.shape) for o in obs]
    reward = float(sum(a == 0 for a in actions))
    return next_obs, reward, rng.random() < 0.01


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    agent = COMA()
    for episode in range(100_000):
        obs = [rng.standard_normal(18) for _ in range(2)]
        done, total = False, 0.0
        while not done:
            actions = agent.get_actions(obs)
            next_obs, reward, done = find_goals_env_step(obs, actions, rng)
            agent.memory["obs"].append(np.stack(obs))
            agent.memory["actions"].append(actions)
            agent.memory["rewards"].append(reward)
            obs, total = next_obs, total + reward
        agent.train()
        if episode % 100 == 0:
            print(episode, total, agent.exploration_report())
