"""The PyTorch PPO example for a differentiable physics engine sums loss tensors across updates

Source: https://github.com/google/brax/pull/152
Style: rl
Kind: loss accumulated across steps with the graph
Runnable from: bench/leaks/cases/rl_brax_ppo_total_loss
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Agent(nn.Module):
    def __init__(self, obs_size=87, action_size=8, hidden=64):
        super().__init__()
        self.policy = nn.Sequential(nn.Linear(obs_size, hidden), nn.SiLU(), nn.Linear(hidden, 2 * action_size))
        self.value = nn.Sequential(nn.Linear(obs_size, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def dist(self, obs):
        loc, scale = self.policy(obs).chunk(2, dim=-1)
        return torch.distributions.Normal(loc, F.softplus(scale) + 1e-3)

    def loss(self, td):
        dist = self.dist(td["observation"])
        logp = dist.log_prob(td["action"]).sum(-1)
        ratio = torch.exp(logp - td["logp"])
        adv = td["advantage"]
        policy_loss = -torch.min(ratio * adv, torch.clamp(ratio, 0.7, 1.3) * adv).mean()
        value_loss = F.mse_loss(self.value(td["observation"]).squeeze(-1), td["returns"])
        return policy_loss + 0.5 * value_loss - 1e-3 * dist.entropy().mean()


def fake_rollout(n=2048):
    return {"observation": torch.randn(n, 87), "action": torch.randn(n, 8), "logp": torch.randn(n),
            "advantage": torch.randn(n), "returns": torch.randn(n)}


def train(num_epochs=2, num_update_epochs=4, minibatches=32):
    torch.manual_seed(0)
    agent = Agent()
    optimizer = torch.optim.Adam(agent.parameters(), lr=3e-4)
    for epoch in range(num_epochs):
        td = fake_rollout()
        total_loss = 0
        for _ in range(num_update_epochs):
            perm = torch.randperm(td["action"].shape[0]).view(minibatches, -1)
            for idx in perm:
                loss = agent.loss({k: v[idx] for k, v in td.items()})
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total_loss += float(loss)
        print(f"epoch {epoch}: mean loss {total_loss / (num_update_epochs * minibatches):.4f}")


if __name__ == "__main__":
    train()
