"""Recurrent PPO on vectorized grid environments: the LSTM state is written into the experience store with its graph

Source: https://github.com/Metta-AI/metta/pull/1139
Style: rl
Kind: graph kept across steps: the rollout runs the policy with autograd on and stores each step's (h, c) LSTM state in the experience buffer without detaching it, so the recurrent graph of every rollout step stays reachable from the buffer until it is overwritten; memory grows over the rollout and across epochs
"""
import torch
import torch.nn as nn


class LSTMPolicy(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=512):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU())
        self.lstm = nn.LSTMCell(hidden, hidden)
        self.actor = nn.Linear(hidden, n_actions)
        self.critic = nn.Linear(hidden, 1)

    def forward(self, obs, state):
        h, c = self.lstm(self.encoder(obs), state)
        return self.actor(h), self.critic(h).squeeze(-1), (h, c)


class Experience:
    def __init__(self, steps, envs, obs_dim, hidden, device):
        self.obs = torch.zeros(steps, envs, obs_dim, device=device)
        self.actions = torch.zeros(steps, envs, dtype=torch.long, device=device)
        self.logprobs = torch.zeros(steps, envs, device=device)
        self.values = torch.zeros(steps, envs, device=device)
        self.rewards = torch.zeros(steps, envs, device=device)
        self.dones = torch.zeros(steps, envs, device=device)
        self.lstm_states = [None] * steps

    def store(self, t, obs, action, logprob, value, reward, done, state):
        self.obs[t] = obs
        self.actions[t] = action
        self.logprobs[t] = logprob.detach()
        self.values[t] = value.detach()
        self.rewards[t] = reward
        self.dones[t] = done
        self.lstm_states[t] = state  # leak: LL102


def gae(exp, last_value, gamma=0.99, lam=0.95):
    steps = exp.rewards.size(0)
    adv = torch.zeros_like(exp.rewards)
    last = 0.0
    for t in reversed(range(steps)):
        next_value = last_value if t == steps - 1 else exp.values[t + 1]
        nonterminal = 1.0 - exp.dones[t]
        delta = exp.rewards[t] + gamma * next_value * nonterminal - exp.values[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv, adv + exp.values


def train(env, epochs=5000, steps=128, device="cuda"):
    obs_dim, n_actions, n_envs = env.obs_dim, env.n_actions, env.num_envs
    policy = LSTMPolicy(obs_dim, n_actions).to(device)
    opt = torch.optim.Adam(policy.parameters(), lr=3e-4, eps=1e-5)
    exp = Experience(steps, n_envs, obs_dim, 512, device)
    obs = torch.as_tensor(env.reset(), dtype=torch.float32, device=device)
    state = (torch.zeros(n_envs, 512, device=device), torch.zeros(n_envs, 512, device=device))
    for epoch in range(epochs):
        start_state = (state[0].detach(), state[1].detach())
        for t in range(steps):
            logits, value, state = policy(obs, state)
            dist = torch.distributions.Categorical(logits=logits)
            action = dist.sample()
            next_obs, reward, done, _ = env.step(action.cpu().numpy())
            done_t = torch.as_tensor(done, dtype=torch.float32, device=device)
            exp.store(t, obs, action, dist.log_prob(action), value,
                      torch.as_tensor(reward, dtype=torch.float32, device=device), done_t, state)
            state = tuple(s * (1.0 - done_t)[:, None] for s in state)
            obs = torch.as_tensor(next_obs, dtype=torch.float32, device=device)
        with torch.no_grad():
            _, last_value, _ = policy(obs, state)
        adv, returns = gae(exp, last_value)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        for _ in range(4):
            h = start_state
            new_logp, new_v = [], []
            for t in range(steps):
                logits, v, h = policy(exp.obs[t], h)
                h = tuple(s * (1.0 - exp.dones[t])[:, None] for s in h)
                new_logp.append(torch.distributions.Categorical(logits=logits).log_prob(exp.actions[t]))
                new_v.append(v)
            ratio = (torch.stack(new_logp) - exp.logprobs).exp()
            pg = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()
            v_loss = 0.5 * (torch.stack(new_v) - returns).pow(2).mean()
            opt.zero_grad()
            (pg + 0.5 * v_loss).backward()
            nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            opt.step()
        state = (state[0].detach(), state[1].detach())
        if epoch % 20 == 0:
            print(f"epoch {epoch} reward {exp.rewards.sum(0).mean().item():.2f} pg {pg.item():.3f}")
