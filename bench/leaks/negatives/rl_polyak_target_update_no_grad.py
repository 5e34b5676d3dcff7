"""DDPG agent updates its target networks every step by Polyak averaging, in place, under torch.no_grad()

Source: https://spinningup.openai.com/en/latest/algorithms/ddpg.html
Style: rl
Kind: negative: resembles state carried from step to step with its graph (running averages of network outputs, target networks rebuilt per update); the target parameters are updated in place without autograd, so nothing accumulates across steps
"""
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OBS_DIM, ACT_DIM = 17, 6


def mlp(sizes, out_act=nn.Identity):
    layers = []
    for i in range(len(sizes) - 1):
        layers += [nn.Linear(sizes[i], sizes[i + 1]), nn.ReLU() if i < len(sizes) - 2 else out_act()]
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.pi = mlp([OBS_DIM, 256, 256, ACT_DIM], nn.Tanh)
        self.q = mlp([OBS_DIM + ACT_DIM, 256, 256, 1])

    def q_value(self, obs, act):
        return self.q(torch.cat([obs, act], dim=-1)).squeeze(-1)


def update(ac, ac_targ, pi_opt, q_opt, batch, gamma=0.99, polyak=0.995):
    obs, act, rew, obs2, done = batch
    with torch.no_grad():
        target = rew + gamma * (1 - done) * ac_targ.q_value(obs2, ac_targ.pi(obs2))
    q_loss = F.mse_loss(ac.q_value(obs, act), target)
    q_opt.zero_grad()
    q_loss.backward()
    q_opt.step()

    for p in ac.q.parameters():
        p.requires_grad = False
    pi_loss = -ac.q_value(obs, ac.pi(obs)).mean()
    pi_opt.zero_grad()
    pi_loss.backward()
    pi_opt.step()
    for p in ac.q.parameters():
        p.requires_grad = True

    with torch.no_grad():
        for p, p_targ in zip(ac.parameters(), ac_targ.parameters()):
            p_targ.data.mul_(polyak)
            p_targ.data.add_((1 - polyak) * p.data)
    return q_loss.item(), pi_loss.item()


def main(steps=1_000_000, batch_size=100, buffer_size=1_000_000):
    ac = ActorCritic()
    ac_targ = copy.deepcopy(ac)
    for p in ac_targ.parameters():
        p.requires_grad = False
    pi_opt = torch.optim.Adam(ac.pi.parameters(), lr=1e-3)
    q_opt = torch.optim.Adam(ac.q.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    obs_buf = np.zeros((buffer_size, OBS_DIM), np.float32)
    act_buf = np.zeros((buffer_size, ACT_DIM), np.float32)
    rew_buf, done_buf = np.zeros(buffer_size, np.float32), np.zeros(buffer_size, np.float32)
    obs = rng.standard_normal(OBS_DIM).astype(np.float32)
    for t in range(steps):
        with torch.no_grad():
            act = ac.pi(torch.as_tensor(obs)).numpy() + 0.1 * rng.standard_normal(ACT_DIM)
        i = t % buffer_size
        obs_buf[i], act_buf[i], rew_buf[i], done_buf[i] = obs, act, -np.square(act).sum(), float(t % 1000 == 999)
        obs = rng.standard_normal(OBS_DIM).astype(np.float32)
        if t >= 10_000 and t % 50 == 0:
            for _ in range(50):
                idx = rng.integers(0, min(t, buffer_size), batch_size)
                next_idx = (idx + 1) % buffer_size
                batch = [torch.as_tensor(a) for a in (obs_buf[idx], act_buf[idx], rew_buf[idx], obs_buf[next_idx], done_buf[idx])]
                q_loss, pi_loss = update(ac, ac_targ, pi_opt, q_opt, batch)
            if t % 5000 == 0:
                print(f"step {t}: q_loss {q_loss:.4f} pi_loss {pi_loss:.4f}")


if __name__ == "__main__":
    main()
