"""Analytic policy gradients through a differentiable simulator wrapped as an autograd.Function that keeps the next state on ctx

Source: https://github.com/pytorch/rl/pull/3052
Style: rl
Kind: the next-state output (and a VJP closure over it) stored on the autograd ctx instead of being saved or released: output -> grad_fn -> ctx -> output is a reference cycle through the autograd graph, so every simulated step of every rollout stays allocated
"""
import torch
import torch.nn as nn

STATE_DIM = 8
ACTION_DIM = 2
DT = 0.05


class PointMassSim:
    """Batched point-mass dynamics with hand-written vector-Jacobian products."""

    def __init__(self, batch_size, device):
        self.batch_size = batch_size
        self.device = device
        self.drag = 0.1

    def reset(self):
        pos = torch.randn(self.batch_size, STATE_DIM // 2, device=self.device)
        vel = torch.zeros(self.batch_size, STATE_DIM // 2, device=self.device)
        return pos, vel

    def step_with_vjp(self, action, pos, vel):
        force = torch.zeros_like(vel)
        force[:, :ACTION_DIM] = action
        new_vel = (1.0 - self.drag) * vel + DT * force
        new_pos = pos + DT * new_vel
        reward = -(new_pos ** 2).sum(-1) - 0.01 * (action ** 2).sum(-1)

        def vjp_fn(g_reward, g_pos, g_vel):
            g_pos_total = g_pos - 2.0 * new_pos * g_reward[:, None]
            g_vel_total = g_vel + DT * g_pos_total
            g_action = DT * g_vel_total[:, :ACTION_DIM] - 0.02 * action * g_reward[:, None]
            return g_action, g_pos_total, (1.0 - self.drag) * g_vel_total

        return reward, new_pos, new_vel, vjp_fn


class SimStep(torch.autograd.Function):
    @staticmethod
    def forward(ctx, sim, action, pos, vel):
        reward, new_pos, new_vel, vjp_fn = sim.step_with_vjp(action.detach(), pos.detach(), vel.detach())
        ctx.vjp_fn = vjp_fn  # leak: LL108
        ctx.next_state = (new_pos, new_vel)  # leak: LL108
        ctx.sim = sim
        return reward, new_pos, new_vel

    @staticmethod
    def backward(ctx, g_reward, g_pos, g_vel):
        g_action, g_pos_prev, g_vel_prev = ctx.vjp_fn(g_reward, g_pos, g_vel)
        return None, g_action, g_pos_prev, g_vel_prev


def train(iterations=3000, horizon=64, batch_size=512):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    sim = PointMassSim(batch_size, device)
    policy = nn.Sequential(nn.Linear(STATE_DIM, 128), nn.Tanh(), nn.Linear(128, ACTION_DIM), nn.Tanh()).to(device)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)

    for it in range(iterations):
        pos, vel = sim.reset()
        total_reward = 0.0
        for _ in range(horizon):
            action = policy(torch.cat([pos, vel], dim=-1))
            reward, pos, vel = SimStep.apply(sim, action, pos, vel)
            total_reward = total_reward + reward
        loss = -total_reward.mean() / horizon
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimizer.step()
        if it % 100 == 0:
            print(f"iter {it} mean reward {-loss.item():.4f}")


if __name__ == "__main__":
    train()
