"""Legged-robot play script runs the trained policy every control step with autograd on; actions feed the observation history

Source: https://github.com/Improbable-AI/walk-these-ways/issues/10
Style: rl
Kind: evaluation rollout records graphs nobody uses: each action is written back into the observation (last action) and the rolling observation history, so every step's graph is chained to the previous one and GPU memory creeps up for the whole play run
"""
import torch
import torch.nn as nn

NUM_OBS = 48
NUM_ACTIONS = 12
HISTORY_LEN = 30
LATENT_DIM = 8


class QuadrupedSim:
    """Tiny stand-in for a vectorised legged-robot simulator."""

    def __init__(self, num_envs, device):
        self.num_envs = num_envs
        self.device = device
        self.dof_pos = torch.zeros(num_envs, NUM_ACTIONS, device=device)
        self.base_lin_vel = torch.zeros(num_envs, 3, device=device)
        self.last_actions = torch.zeros(num_envs, NUM_ACTIONS, device=device)
        self.commands = torch.zeros(num_envs, 3, device=device)

    def observe(self):
        noise = 0.01 * torch.randn(self.num_envs, NUM_OBS - 2 * NUM_ACTIONS - 3, device=self.device)
        return torch.cat([self.commands, self.dof_pos, self.last_actions, noise], dim=-1)

    def step(self, actions):
        actions = torch.clamp(actions, -5.0, 5.0)
        self.last_actions = actions
        self.dof_pos = 0.9 * self.dof_pos + 0.1 * actions.detach()
        self.base_lin_vel[:, 0] = self.dof_pos.mean(dim=-1)
        reward = -(self.base_lin_vel[:, 0] - self.commands[:, 0]).abs()
        return self.observe(), reward


class HistoryWrapper:
    def __init__(self, env):
        self.env = env
        self.obs_history = torch.zeros(env.num_envs, HISTORY_LEN * NUM_OBS, device=env.device)

    def reset(self):
        self.obs_history.zero_()
        obs = self.env.observe()
        self.obs_history = torch.cat([self.obs_history[:, NUM_OBS:], obs], dim=-1)
        return {"obs": obs, "obs_history": self.obs_history}

    def step(self, actions):
        obs, reward = self.env.step(actions)
        self.obs_history = torch.cat([self.obs_history[:, NUM_OBS:], obs], dim=-1)
        return {"obs": obs, "obs_history": self.obs_history}, reward


def load_policy(device):
    adaptation = nn.Sequential(nn.Linear(HISTORY_LEN * NUM_OBS, 256), nn.ELU(), nn.Linear(256, LATENT_DIM)).to(device)
    body = nn.Sequential(nn.Linear(HISTORY_LEN * NUM_OBS + LATENT_DIM, 512), nn.ELU(), nn.Linear(512, NUM_ACTIONS)).to(device)

    def policy(obs):
        latent = adaptation(obs["obs_history"])
        return body(torch.cat([obs["obs_history"], latent], dim=-1))

    return policy


def play(num_eval_steps=20000, x_vel_cmd=1.5):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    env = HistoryWrapper(QuadrupedSim(num_envs=1, device=device))
    policy = load_policy(device)

    measured_x_vels = []
    obs = env.reset()
    for step in range(num_eval_steps):
        with torch.no_grad():
            actions = policy(obs)
        env.env.commands[:, 0] = x_vel_cmd
        obs, reward = env.step(actions)
        measured_x_vels.append(env.env.base_lin_vel[0, 0].item())
        if step % 1000 == 0:
            print(f"step {step} vel {measured_x_vels[-1]:.3f} reward {reward.mean().item():.3f}")
    return measured_x_vels


if __name__ == "__main__":
    play()
