"""SAC-Q (scheduled auxiliary control) on a robot-arm task: `act()` runs the actor in eval mode but with autograd on, and its actions go into the trajectory buffer

Source: https://github.com/hu-po/pySACQ/issues/2
Style: rl
Kind: evaluation-style forward records a graph nobody uses: every environment step's actor forward is recorded (actor.eval() does not stop autograd), and the action tensors stored in the replay trajectories keep those graphs, so history from acting accumulates together with the learner's
"""
import random
from collections import deque

import gym
import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_INTENTIONS = 4  # main task + auxiliary tasks


class Actor(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=128):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ELU(), nn.Linear(hidden, hidden), nn.ELU())
        self.heads = nn.ModuleList([nn.Linear(hidden, n_actions) for _ in range(NUM_INTENTIONS)])

    def forward(self, obs, intention):
        return F.softmax(self.heads[intention](self.body(obs)), dim=-1)

    def predict(self, obs, intention):
        probs = self(obs, intention)
        dist = torch.distributions.Categorical(probs)
        action = dist.sample()
        return action, probs


class Critic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ELU(), nn.Linear(hidden, NUM_INTENTIONS * n_actions))
        self.n_actions = n_actions

    def forward(self, obs):
        return self.net(obs).view(-1, NUM_INTENTIONS, self.n_actions)


def act(actor, env, device, steps=200, switch_every=40):
    actor.eval()
    obs = env.reset()
    trajectory = []
    for t in range(steps):
        if t % switch_every == 0:
            intention = random.randrange(NUM_INTENTIONS)
        obs_t = torch.as_tensor(obs, dtype=torch.float32, device=device)
        action, probs = actor.predict(obs_t, intention)  # leak: LL201
        next_obs, reward, done, _ = env.step(action.item())
        trajectory.append((obs_t, action, probs, torch.as_tensor(reward, dtype=torch.float32), intention))
        obs = next_obs
        if done:
            break
    actor.train()
    return trajectory


def learn(actor, critic, actor_opt, critic_opt, replay, batch_trajectories=8, gamma=0.99):
    for trajectory in random.sample(list(replay), min(batch_trajectories, len(replay))):
        obs = torch.stack([step[0] for step in trajectory])
        actions = torch.stack([step[1] for step in trajectory])
        rewards = torch.stack([step[3] for step in trajectory]).to(obs.device)
        q_all = critic(obs)
        q_taken = q_all[torch.arange(len(actions)), :, actions]
        with torch.no_grad():
            targets = rewards.unsqueeze(1) + gamma * torch.cat([q_taken[1:], q_taken[-1:]]).detach()
        critic_loss = F.mse_loss(q_taken, targets)
        critic_opt.zero_grad()
        critic_loss.backward()
        critic_opt.step()

        actor_loss = 0.0
        for intention in range(NUM_INTENTIONS):
            probs = actor(obs, intention)
            actor_loss = actor_loss - (probs * critic(obs)[:, intention].detach()).sum(-1).mean()
        actor_opt.zero_grad()
        actor_loss.backward()
        actor_opt.step()


def main(episodes=20000):
    device = torch.device("cuda")
    env = gym.make("Acrobot-v1")
    obs_dim, n_actions = env.observation_space.shape[0], env.action_space.n
    actor, critic = Actor(obs_dim, n_actions).to(device), Critic(obs_dim, n_actions).to(device)
    actor_opt = torch.optim.Adam(actor.parameters(), lr=2e-4)
    critic_opt = torch.optim.Adam(critic.parameters(), lr=2e-4)
    replay = deque(maxlen=3000)
    for episode in range(episodes):
        replay.append(act(actor, env, device))
        learn(actor, critic, actor_opt, critic_opt, replay)
        if episode % 100 == 0:
            print(f"episode {episode} allocated {torch.cuda.memory_allocated() / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
