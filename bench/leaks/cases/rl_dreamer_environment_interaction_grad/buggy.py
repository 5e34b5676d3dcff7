"""Dreamer's environment interaction runs the world model and actor with autograd on; unbounded episodes OOM

Source: https://github.com/kc-ml2/SimpleDreamer/issues/7
Style: rl
Kind: state fed into the next step: the RSSM deterministic/posterior state is carried through every environment step with its graph
"""
import numpy as np
import torch
import torch.nn as nn


class RSSM(nn.Module):
    def __init__(self, stoch=30, det=200, action_size=3, embed=1024, hidden=200):
        super().__init__()
        self.cell = nn.GRUCell(hidden, det)
        self.pre = nn.Sequential(nn.Linear(stoch + action_size, hidden), nn.ELU())
        self.post = nn.Sequential(nn.Linear(det + embed, hidden), nn.ELU(), nn.Linear(hidden, 2 * stoch))

    def recurrent_model(self, posterior, action, deterministic):
        return self.cell(self.pre(torch.cat([posterior, action], dim=-1)), deterministic)

    def representation_model(self, embedded, deterministic):
        mean, std = self.post(torch.cat([embedded, deterministic], dim=-1)).chunk(2, dim=-1)
        dist = torch.distributions.Normal(mean, nn.functional.softplus(std) + 0.1)
        return dist, dist.rsample()


class Encoder(nn.Module):
    def __init__(self, embed=1024):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 32, 4, 2), nn.ReLU(), nn.Conv2d(32, 64, 4, 2), nn.ReLU(),
                                 nn.Conv2d(64, 128, 4, 2), nn.ReLU(), nn.Conv2d(128, 256, 4, 2), nn.ReLU(), nn.Flatten())

    def forward(self, obs):
        return self.net(obs)


class Actor(nn.Module):
    def __init__(self, stoch=30, det=200, action_size=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(stoch + det, 400), nn.ELU(), nn.Linear(400, action_size), nn.Tanh())

    def forward(self, posterior, deterministic):
        return self.net(torch.cat([posterior, deterministic], dim=-1))


class CarRacingStub:
    """64x64 RGB observations, no time limit: an episode only ends when the car leaves the track."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)

    def reset(self):
        return self.rng.random((3, 64, 64), dtype=np.float32)

    def step(self, action):
        return self.rng.random((3, 64, 64), dtype=np.float32), float(self.rng.normal()), self.rng.random() < 0.0005


class Dreamer:
    def __init__(self, device):
        self.device = device
        self.encoder, self.rssm, self.actor = Encoder().to(device), RSSM().to(device), Actor().to(device)

    def environment_interaction(self, env, num_interaction_episodes, buffer):
        for _ in range(num_interaction_episodes):
            posterior = torch.zeros(1, 30, device=self.device)
            deterministic = torch.zeros(1, 200, device=self.device)
            action = torch.zeros(1, 3, device=self.device)
            observation = env.reset()
            score, done = 0.0, False
            while not done:
                embedded = self.encoder(torch.from_numpy(observation).to(self.device).unsqueeze(0))
                deterministic = self.rssm.recurrent_model(posterior, action, deterministic)  # leak: LL103
                _, posterior = self.rssm.representation_model(embedded, deterministic)  # leak: LL103
                action = self.actor(posterior, deterministic)  # leak: LL103
                next_observation, reward, done = env.step(action.detach().cpu().numpy()[0])
                buffer.append((observation, action.detach().cpu().numpy()[0], reward, next_observation, done))
                score += reward
                observation = next_observation
            print("episode score", score)


if __name__ == "__main__":
    agent = Dreamer("cuda" if torch.cuda.is_available() else "cpu")
    replay = []
    for iteration in range(1000):
        agent.environment_interaction(CarRacingStub(iteration), 1, replay)
