"""A GFlowNet agent tracks EMAs of its terminal and non-terminal loss terms as tensors

Source: https://github.com/alexhernandezgarcia/gflownet/pull/133
Style: rl
Kind: EMAs of loss terms with a lazy None start, built from a helper returning a tuple
Runnable from: bench/leaks/cases/rl_gflownet_loss_term_ema
"""
import torch
import torch.nn as nn


class GFlowNetAgent:
    def __init__(self, state_dim=16, n_actions=8, ema_alpha=0.5):
        self.forward_policy = nn.Sequential(nn.Linear(state_dim, 64), nn.LeakyReLU(), nn.Linear(64, n_actions))
        self.logZ = nn.Parameter(torch.zeros(1))
        self.optimizer = torch.optim.Adam(list(self.forward_policy.parameters()) + [self.logZ], lr=1e-4)
        self.ema_alpha = ema_alpha
        self.loss_term_ema = None
        self.loss_flow_ema = None

    def trajectory_balance(self, states, actions, log_rewards, done):
        logits = self.forward_policy(states)
        logprobs = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
        per_traj = self.logZ + logprobs.view(-1, 10).sum(1) - log_rewards
        loss_term = (per_traj[done] ** 2).mean()
        loss_flow = (per_traj[~done] ** 2).mean()
        return loss_term, loss_flow

    def train_step(self, batch):
        loss_term, loss_flow = self.trajectory_balance(*batch)
        loss = loss_term + loss_flow
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        if self.loss_term_ema is None:
            self.loss_term_ema, self.loss_flow_ema = loss_term.item(), loss_flow.item()
        else:
            self.loss_term_ema = self.ema_alpha * loss_term.item() + (1 - self.ema_alpha) * self.loss_term_ema
            self.loss_flow_ema = self.ema_alpha * loss_flow.item() + (1 - self.ema_alpha) * self.loss_flow_ema
        return loss.item()


def sample_batch(n_traj=16):
    states = torch.randn(n_traj * 10, 16)
    actions = torch.randint(0, 8, (n_traj * 10,))
    done = torch.arange(n_traj) % 2 == 0
    return states, actions, torch.randn(n_traj), done


if __name__ == "__main__":
    torch.manual_seed(0)
    agent = GFlowNetAgent()
    for it in range(200):
        agent.train_step(sample_batch())
        if it % 100 == 0:
            print(it, float(agent.loss_term_ema), float(agent.loss_flow_ema))
