"""GRPO rollout generation runs the policy with autograd on and keeps every trajectory

Source: https://github.com/billy-enrizky/openbrowser-ai/pull/64
Style: rl
Kind: rollout forwards record graphs nobody uses; trajectories keep them until the update
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TokenPolicy(nn.Module):
    def __init__(self, vocab=32_000, dim=1024, layers=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        block = nn.TransformerEncoderLayer(dim, 16, 4 * dim, batch_first=True)
        self.body = nn.TransformerEncoder(block, layers)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.head(self.body(self.embed(tokens)))


def reward_fn(tokens):
    return (tokens[:, -16:] % 7 == 0).float().mean(-1)


def grpo_step(policy, optimizer, prompt, group_size=8, gen_length=64):
    trajectories = []
    for _ in range(group_size):
        tokens = prompt.clone()
        step_logps = []
        for _ in range(gen_length):
            with torch.no_grad():
                logits = policy(tokens)[:, -1]
            next_token = torch.multinomial(logits.softmax(-1), 1)
            step_logps.append(F.log_softmax(logits, -1).gather(1, next_token))
            tokens = torch.cat([tokens, next_token], dim=1)
        trajectories.append({"tokens": tokens, "old_logp": torch.cat(step_logps, 1)})
    rewards = torch.stack([reward_fn(t["tokens"]) for t in trajectories]).squeeze(-1)
    advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-6)
    loss = 0.0
    for traj, adv in zip(trajectories, advantages):
        logits = policy(traj["tokens"][:, :-1])[:, prompt.shape[1] - 1:]
        new_logp = F.log_softmax(logits, -1).gather(2, traj["tokens"][:, prompt.shape[1]:, None]).squeeze(-1)
        ratio = torch.exp(new_logp - traj["old_logp"].detach())
        loss = loss - torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean() / group_size
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return rewards.mean().item()


if __name__ == "__main__":
    policy = TokenPolicy()
    optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-6)
    for step in range(1000):
        prompt = torch.randint(0, 32_000, (1, 128))
        print(step, grpo_step(policy, optimizer, prompt))
