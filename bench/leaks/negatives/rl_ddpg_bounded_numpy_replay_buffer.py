"""A DDPG agent's replay buffer grows to its capacity and then overwrites the oldest transitions (numpy arrays only)

Source: https://github.com/ray-project/ray/issues/6857
Style: rl
Kind: negative: a buffer appended every environment step for the whole run (bounded by its capacity; observations stored as numpy, no graph)
"""
import numpy as np
import torch
import torch.nn as nn


class ReplayBuffer:
    def __init__(self, capacity, obs_dim, act_dim):
        self.capacity, self.ptr, self.size = capacity, 0, 0
        self.obs = np.zeros((capacity, obs_dim), dtype=np.float32)
        self.act = np.zeros((capacity, act_dim), dtype=np.float32)
        self.rew = np.zeros(capacity, dtype=np.float32)
        self.next_obs = np.zeros((capacity, obs_dim), dtype=np.float32)
        self.done = np.zeros(capacity, dtype=np.float32)

    def add(self, o, a, r, o2, d):
        self.obs[self.ptr], self.act[self.ptr], self.rew[self.ptr] = o, a, r
        self.next_obs[self.ptr], self.done[self.ptr] = o2, d
        self.ptr = (self.ptr + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch_size):
        idx = np.random.randint(0, self.size, batch_size)
        return [torch.as_tensor(a[idx]) for a in (self.obs, self.act, self.rew, self.next_obs, self.done)]


def mlp(i, o, out_act=None):
    layers = [nn.Linear(i, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, o)]
    return nn.Sequential(*layers, *([out_act] if out_act else []))


def main(steps=1_000_000, obs_dim=17, act_dim=6, gamma=0.99, tau=0.005):
    actor, critic = mlp(obs_dim, act_dim, nn.Tanh()), mlp(obs_dim + act_dim, 1)
    actor_t, critic_t = mlp(obs_dim, act_dim, nn.Tanh()), mlp(obs_dim + act_dim, 1)
    actor_t.load_state_dict(actor.state_dict())
    critic_t.load_state_dict(critic.state_dict())
    a_opt, c_opt = torch.optim.Adam(actor.parameters(), 1e-3), torch.optim.Adam(critic.parameters(), 1e-3)
    buffer = ReplayBuffer(100_000, obs_dim, act_dim)
    rng = np.random.default_rng(0)
    obs = rng.standard_normal(obs_dim).astype(np.float32)
    for t in range(steps):
        with torch.no_grad():
            action = actor(torch.as_tensor(obs)).numpy() + 0.1 * rng.standard_normal(act_dim)
        next_obs = (obs + 0.01 * rng.standard_normal(obs_dim)).astype(np.float32)
        reward, done = float(-np.square(action).sum()), rng.random() < 0.001
        buffer.add(obs, action, reward, next_obs, float(done))
        obs = rng.standard_normal(obs_dim).astype(np.float32) if done else next_obs
        if buffer.size >= 1000:
            o, a, r, o2, d = buffer.sample(256)
            with torch.no_grad():
                target = r + gamma * (1 - d) * critic_t(torch.cat([o2, actor_t(o2)], 1)).squeeze(-1)
            c_loss = ((critic(torch.cat([o, a], 1)).squeeze(-1) - target) ** 2).mean()
            c_opt.zero_grad()
            c_loss.backward()
            c_opt.step()
            a_loss = -critic(torch.cat([o, actor(o)], 1)).mean()
            a_opt.zero_grad()
            a_loss.backward()
            a_opt.step()
            with torch.no_grad():
                for net, tgt in ((actor, actor_t), (critic, critic_t)):
                    for p, p_t in zip(net.parameters(), tgt.parameters()):
                        p_t.mul_(1 - tau).add_(tau * p)
        if t % 10_000 == 0:
            print(t, buffer.size)


if __name__ == "__main__":
    main()
