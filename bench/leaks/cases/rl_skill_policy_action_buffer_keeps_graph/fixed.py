"""Hierarchical navigation env: a frozen pre-trained locomotion policy's output is copied into a persistent action buffer with its graph

Source: https://github.com/isaac-sim/IsaacLab/pull/5923
Style: rl
Kind: a graph-attached tensor kept in an attribute from one step to the next: the env is stepped outside inference mode, the low-level policy output requires grad, and copying it into the preallocated action buffer makes the buffer part of every step's graph (each in-place copy chains onto the previous one)
"""
import torch
import torch.nn as nn

NUM_ENVS = 256
PROPRIO_DIM = 45
COMMAND_DIM = 3
JOINTS = 12


class LowLevelActionTerm:
    """Turns high-level velocity commands into joint targets with a pre-trained walking policy."""

    def __init__(self, walker: nn.Module, device):
        self.walker = walker
        self.low_level_actions = torch.zeros(NUM_ENVS, JOINTS, device=device)
        self.processed_commands = torch.zeros(NUM_ENVS, COMMAND_DIM, device=device)

    def process_actions(self, commands):
        self.processed_commands[:] = commands.clamp(-1.0, 1.0)

    def apply_actions(self, proprio):
        walker_obs = torch.cat([proprio, self.processed_commands], dim=-1)
        with torch.no_grad():
            joint_targets = self.walker(walker_obs)
        self.low_level_actions.copy_(joint_targets.detach())
        return self.low_level_actions


class NavigationEnv:
    def __init__(self, walker, device):
        self.device = device
        self.action_term = LowLevelActionTerm(walker, device)
        self.joint_pos = torch.zeros(NUM_ENVS, JOINTS, device=device)
        self.base_pos = torch.zeros(NUM_ENVS, 2, device=device)
        self.goal = torch.randn(NUM_ENVS, 2, device=device)

    def proprio(self):
        noise = 0.01 * torch.randn(NUM_ENVS, PROPRIO_DIM - JOINTS, device=self.device)
        return torch.cat([self.joint_pos, noise], dim=-1)

    def observe(self):
        return torch.cat([self.goal - self.base_pos, self.joint_pos], dim=-1).detach()

    def step(self, commands, decimation=4):
        self.action_term.process_actions(commands)
        for _ in range(decimation):
            targets = self.action_term.apply_actions(self.proprio())
            self.joint_pos = (0.8 * self.joint_pos + 0.2 * targets).detach()
        self.base_pos = self.base_pos + 0.02 * commands[:, :2].detach()
        reward = -(self.goal - self.base_pos).norm(dim=-1)
        return self.observe(), reward


def main(iterations=2000, horizon=24):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    walker = nn.Sequential(nn.Linear(PROPRIO_DIM + COMMAND_DIM, 256), nn.ELU(), nn.Linear(256, JOINTS)).to(device)
    walker.eval()  # frozen skill, loaded from a checkpoint in the real setup
    planner = nn.Sequential(nn.Linear(2 + JOINTS, 128), nn.Tanh(), nn.Linear(128, 2 * COMMAND_DIM)).to(device)
    optimizer = torch.optim.Adam(planner.parameters(), lr=3e-4)
    env = NavigationEnv(walker, device)

    obs = env.observe()
    for it in range(iterations):
        log_probs, rewards = [], []
        for _ in range(horizon):
            mean, log_std = planner(obs).chunk(2, dim=-1)
            dist = torch.distributions.Normal(mean, log_std.clamp(-5, 2).exp())
            commands = dist.sample()
            log_probs.append(dist.log_prob(commands).sum(-1))
            obs, reward = env.step(commands)
            rewards.append(reward)
        returns = torch.stack(rewards).flip(0).cumsum(0).flip(0)
        advantages = (returns - returns.mean()) / (returns.std() + 1e-6)
        loss = -(torch.stack(log_probs) * advantages).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if it % 100 == 0:
            print(f"iter {it} loss {loss.item():.4f} return {returns[0].mean().item():.3f}")


if __name__ == "__main__":
    main()
