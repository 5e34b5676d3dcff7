"""A Lightning REINFORCE model appends every episode to its batch lists and never clears them

Source: https://github.com/Lightning-Universe/lightning-bolts/issues/399
Style: rl
Kind: lists on self grow with every episode (states, actions, discounted returns of the whole run); memory and step time grow batch after batch
Runnable from: bench/leaks/cases/rl_reinforce_batch_lists_never_cleared
"""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, IterableDataset


class CartPoleLike:
    """A tiny stand-in environment with gym's reset/step API: episodes of 32 steps."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.t, self.length = 0, 0

    def reset(self):
        self.t, self.length = 0, 32
        return self.rng.standard_normal(4).astype(np.float32), {}

    def step(self, action):
        self.t += 1
        return self.rng.standard_normal(4).astype(np.float32), 1.0, self.t >= self.length, False, {}


class ExperienceSource(IterableDataset):
    def __init__(self, generate_batch):
        self.generate_batch = generate_batch

    def __iter__(self):
        return self.generate_batch()


class Reinforce(nn.Module):
    """The LightningModule's core: train_batch feeds the DataLoader, training_step is called by fit()."""

    def __init__(self, gamma=0.99, lr=1e-2, batch_episodes=2, batch_size=8):
        super().__init__()
        self.env = CartPoleLike()
        self.net = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 2))
        self.gamma, self.lr, self.batch_episodes, self.batch_size = gamma, lr, batch_episodes, batch_size
        self.batch_states, self.batch_actions, self.batch_qvals = [], [], []
        self.state, _ = self.env.reset()

    def discount(self, rewards):
        out, running = [], 0.0
        for r in reversed(rewards):
            running = r + self.gamma * running
            out.append(running)
        return list(reversed(out))

    def train_batch(self):
        for _ in range(self.batch_episodes):
            states, actions, rewards, done = [], [], [], False
            while not done:
                with torch.no_grad():
                    probs = torch.softmax(self.net(torch.as_tensor(self.state, dtype=torch.float32)), -1)
                action = int(torch.multinomial(probs, 1))
                next_state, reward, terminated, truncated, _ = self.env.step(action)
                states.append(self.state)
                actions.append(action)
                rewards.append(reward)
                done = terminated or truncated
                self.state = self.env.reset()[0] if done else next_state
            self.batch_states.extend(states)  # leak: new:cache-growth
            self.batch_actions.extend(actions)  # leak: new:cache-growth
            self.batch_qvals.extend(self.discount(rewards))  # leak: new:cache-growth
        for idx in range(len(self.batch_actions)):
            yield self.batch_states[idx], self.batch_actions[idx], self.batch_qvals[idx]

    def training_step(self, batch, batch_idx):
        states, actions, qvals = batch
        qvals = (qvals - qvals.mean()) / (qvals.std() + 1e-8)
        log_probs = torch.log_softmax(self.net(states.float()), dim=-1)
        return -(qvals * log_probs[range(len(actions)), actions]).mean()

    def configure_optimizers(self):
        return torch.optim.Adam(self.net.parameters(), lr=self.lr)

    def train_dataloader(self):
        return DataLoader(ExperienceSource(self.train_batch), batch_size=self.batch_size)


def fit(module, max_epochs):
    optimizer = module.configure_optimizers()
    for epoch in range(max_epochs):
        for batch_idx, batch in enumerate(module.train_dataloader()):
            loss = module.training_step(batch, batch_idx)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    fit(Reinforce(), max_epochs=100)
