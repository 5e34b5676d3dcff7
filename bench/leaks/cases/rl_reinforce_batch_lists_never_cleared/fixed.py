"""A Lightning REINFORCE model appends every episode to its batch lists and never clears them

Source: https://github.com/Lightning-Universe/lightning-bolts/issues/399
Style: rl
Kind: lists on self grow with every episode (states, actions, discounted returns of the whole run); memory and step time grow batch after batch
"""
import gym
import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, IterableDataset


class ExperienceSource(IterableDataset):
    def __init__(self, generate_batch):
        self.generate_batch = generate_batch

    def __iter__(self):
        return self.generate_batch()


class Reinforce(pl.LightningModule):
    def __init__(self, env="CartPole-v1", gamma=0.99, lr=1e-2, batch_episodes=4, batch_size=8, epoch_len=1000):
        super().__init__()
        self.env = gym.make(env)
        self.net = nn.Sequential(nn.Linear(self.env.observation_space.shape[0], 128), nn.ReLU(),
                                 nn.Linear(128, self.env.action_space.n))
        self.gamma, self.lr, self.batch_episodes = gamma, lr, batch_episodes
        self.batch_size, self.epoch_len = batch_size, epoch_len
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
            self.batch_states.extend(states)
            self.batch_actions.extend(actions)
            self.batch_qvals.extend(self.discount(rewards))
        for idx in range(len(self.batch_actions)):
            yield self.batch_states[idx], self.batch_actions[idx], self.batch_qvals[idx]
        self.batch_states, self.batch_actions, self.batch_qvals = [], [], []

    def training_step(self, batch, batch_idx):
        states, actions, qvals = batch
        qvals = (qvals - qvals.mean()) / (qvals.std() + 1e-8)
        log_probs = torch.log_softmax(self.net(states.float()), dim=-1)
        loss = -(qvals * log_probs[range(len(actions)), actions]).mean()
        self.log("loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.net.parameters(), lr=self.lr)

    def train_dataloader(self):
        return DataLoader(ExperienceSource(self.train_batch), batch_size=self.batch_size)


if __name__ == "__main__":
    np.random.seed(0)
    model = Reinforce()
    pl.Trainer(max_epochs=500, accelerator="cpu").fit(model)
