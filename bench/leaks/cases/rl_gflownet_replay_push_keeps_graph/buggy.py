"""Trajectory-balance GFlowNet with a replay buffer: sampled trajectories are pushed with their log-prob tensors

Source: https://github.com/recursionpharma/gflownet/pull/130
Style: rl
Kind: graph kept across steps in a replay buffer: every online trajectory is pushed with its per-step forward log-probs (computed with grad for the TB loss) and its GPU tensors; the buffer holds up to capacity entries, each keeping its sampling graph on the GPU, until CUDA OOM
"""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

SEQ_LEN, VOCAB = 12, 8


class SequencePolicy(nn.Module):
    def __init__(self, hidden=256):
        super().__init__()
        self.embed = nn.Embedding(VOCAB + 1, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, VOCAB)
        self.log_z = nn.Parameter(torch.zeros(1))

    def step_logits(self, prefix):
        h, _ = self.gru(self.embed(prefix))
        return self.head(h[:, -1])


class ReplayBuffer:
    def __init__(self, capacity, warmup):
        self.capacity, self.warmup = capacity, warmup
        self.buffer, self.position = [], 0

    def push(self, tokens, log_probs, log_reward):
        entry = (tokens, log_probs, log_reward)
        if len(self.buffer) < self.capacity:
            self.buffer.append(None)
        self.buffer[self.position] = entry  # leak: LL102
        self.position = (self.position + 1) % self.capacity

    def sample(self, n):
        picked = random.sample(self.buffer, n)
        return [torch.stack(col) for col in zip(*picked)]

    def __len__(self):
        return len(self.buffer)


def reward_fn(tokens):
    counts = F.one_hot(tokens, VOCAB).sum(1).float()
    return torch.log1p(counts[:, 0] * 2 + counts[:, 3])


def sample_trajectories(policy, n, device):
    tokens = torch.full((n, 1), VOCAB, dtype=torch.long, device=device)
    log_probs = []
    for _ in range(SEQ_LEN):
        dist = torch.distributions.Categorical(logits=policy.step_logits(tokens))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        tokens = torch.cat([tokens, action[:, None]], dim=1)
    return tokens[:, 1:], torch.stack(log_probs, 1)


def trajectory_log_probs(policy, tokens):
    prefix = torch.full((tokens.size(0), 1), VOCAB, dtype=torch.long, device=tokens.device)
    out = []
    for t in range(SEQ_LEN):
        logits = policy.step_logits(torch.cat([prefix, tokens[:, :t]], dim=1))
        out.append(F.log_softmax(logits, -1).gather(1, tokens[:, t:t + 1]).squeeze(1))
    return torch.stack(out, 1)


def tb_loss(policy, log_probs, log_reward):
    return (policy.log_z + log_probs.sum(1) - log_reward).pow(2).mean()


def train(steps=80_000, batch=64, replay_batch=64, device="cuda"):
    policy = SequencePolicy().to(device)
    opt = torch.optim.Adam([
        {"params": [p for n, p in policy.named_parameters() if n != "log_z"], "lr": 1e-4},
        {"params": [policy.log_z], "lr": 1e-2},
    ])
    replay = ReplayBuffer(capacity=10_000, warmup=1_000)
    for step in range(steps):
        tokens, log_probs = sample_trajectories(policy, batch, device)
        log_reward = reward_fn(tokens)
        for i in range(batch):
            replay.push(tokens[i], log_probs[i], log_reward[i])
        loss = tb_loss(policy, log_probs, log_reward)
        if len(replay) >= replay.warmup:
            r_tokens, _, r_reward = replay.sample(replay_batch)
            loss = loss + tb_loss(policy, trajectory_log_probs(policy, r_tokens), r_reward)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.4f} logZ {policy.log_z.item():.3f}")


if __name__ == "__main__":
    train()
