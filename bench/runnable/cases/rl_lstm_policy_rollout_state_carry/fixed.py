"""An LSTMCell policy evaluates a whole batch of episodes step by step, carrying (h, c) with the graph

Source: https://github.com/pytorch/pytorch/issues/1536
Style: rl
Kind: RNN state in an inference loop carried with its graph
Runnable from: bench/leaks/cases/rl_lstm_policy_rollout_state_carry
Run: --step __main__:PolicyNet.forward
"""
import torch
import torch.nn as nn


class PolicyNet(nn.Module):
    def __init__(self, obs_size=5, hidden=32, n_actions=4):
        super().__init__()
        self.lstm = nn.LSTMCell(obs_size, hidden)
        self.linear = nn.Linear(hidden, n_actions)

    def forward(self, x, h0, c0):
        h1, c1 = self.lstm(x, (h0, c0))
        return self.linear(h1), h1, c1


@torch.no_grad()
def score_episodes(policy_net, episodes, n_agents=64):
    """Sum of log-probabilities of the recorded actions, used to pick the best checkpoint."""
    h_n = torch.zeros(n_agents, 32)
    c_n = torch.zeros(n_agents, 32)
    total_log_prob = torch.zeros(n_agents)
    for obs, actions in episodes:
        logits, h_n, c_n = policy_net(obs, h_n, c_n)
        dist = torch.log_softmax(logits, dim=-1)
        total_log_prob += dist.gather(1, actions[:, None]).squeeze(1)
    return total_log_prob


def recorded_episodes(steps=100, n_agents=64):
    for _ in range(steps):
        yield torch.randn(n_agents, 5), torch.randint(0, 4, (n_agents,))


if __name__ == "__main__":
    torch.manual_seed(0)
    checkpoints = [PolicyNet() for _ in range(2)]
    scores = []
    for net in checkpoints:
        net.eval()
        scores.append(score_episodes(net, recorded_episodes()).mean().item())
    print("best checkpoint:", max(range(len(scores)), key=scores.__getitem__))
