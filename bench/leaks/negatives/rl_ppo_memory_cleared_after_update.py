"""A PPO agent's rollout memory keeps states, actions and log-probs and is cleared after every update

Source: https://github.com/nikhilbarhate99/PPO-PyTorch/issues/16
Style: rl
Kind: negative: lists of tensors on a memory object (filled under no_grad, cleared each update)
"""
import torch
import torch.nn as nn
from torch.distributions import MultivariateNormal


class Memory:
    def __init__(self):
        self.actions, self.states, self.logprobs, self.rewards, self.is_terminals = [], [], [], [], []

    def clear_memory(self):
        del self.actions[:]
        del self.states[:]
        del self.logprobs[:]
        del self.rewards[:]
        del self.is_terminals[:]


class ActorCritic(nn.Module):
    def __init__(self, state_dim=24, action_dim=4, action_std=0.5):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(state_dim, 64), nn.Tanh(), nn.Linear(64, action_dim), nn.Tanh())
        self.critic = nn.Sequential(nn.Linear(state_dim, 64), nn.Tanh(), nn.Linear(64, 1))
        self.action_var = torch.full((action_dim,), action_std * action_std)

    @torch.no_grad()
    def act(self, state, memory):
        dist = MultivariateNormal(self.actor(state), torch.diag(self.action_var))
        action = dist.sample()
        memory.states.append(state)
        memory.actions.append(action)
        memory.logprobs.append(dist.log_prob(action))
        return action


def update(policy, optimizer, memory, K_epochs=80, gamma=0.99):
    returns, discounted = [], 0
    for reward, done in zip(reversed(memory.rewards), reversed(memory.is_terminals)):
        discounted = 0 if done else discounted
        discounted = reward + gamma * discounted
        returns.insert(0, discounted)
    returns = torch.tensor(returns)
    states, actions, old_logprobs = torch.stack(memory.states), torch.stack(memory.actions), torch.stack(memory.logprobs)
    for _ in range(K_epochs):
        dist = MultivariateNormal(policy.actor(states), torch.diag(policy.action_var))
        ratios = torch.exp(dist.log_prob(actions) - old_logprobs)
        advantages = returns - policy.critic(states).squeeze(-1).detach()
        loss = -torch.min(ratios * advantages, torch.clamp(ratios, 0.8, 1.2) * advantages).mean()
        loss = loss + 0.5 * ((policy.critic(states).squeeze(-1) - returns) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    policy, memory = ActorCritic(), Memory()
    optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
    for episode in range(2500):
        for t in range(400):
            policy.act(torch.randn(24), memory)
            memory.rewards.append(float(torch.rand(())))
            memory.is_terminals.append(t == 399)
        update(policy, optimizer, memory)
        memory.clear_memory()
