"""Findings that are shown only with ``--min-confidence low``: the rule sees the pattern, but
whether it leaks depends on what the rest of the program does."""

from __future__ import annotations

import textwrap

from leaklint.findings import Confidence
from leaklint.registry import all_rules
from leaklint.testing import lint_snippet


def confidences(source: str, code: str) -> dict[int, Confidence]:
    findings, errors = lint_snippet(textwrap.dedent(source), [all_rules()[code]], min_confidence=Confidence.LOW)
    assert errors == []
    return {finding.line: finding.confidence for finding in findings}


def test_an_output_kept_on_ctx_that_backward_deletes_is_low_confidence():
    # the cycle output -> grad_fn -> ctx -> output stays closed on every call whose backward never runs
    source = """
        import torch

        class Coupling(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.y = y
                return y

            @staticmethod
            def backward(ctx, grad):
                y = ctx.y
                del ctx.y
                return grad * 2
        """
    assert confidences(source, "LL108") == {8: Confidence.LOW}
    assert confidences(source.replace("                del ctx.y\n", ""), "LL108") == {8: Confidence.HIGH}


def test_graphs_kept_for_an_episode_next_to_the_backpropagated_ones_are_low_confidence():
    # the entropies hang from the policy forwards that the episode's loss backpropagates through
    # the log-probabilities: only the entropy tail of each step is extra
    source = """
        import torch

        class Policy(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = torch.nn.Linear(8, 4)

            def forward(self, obs):
                return torch.distributions.Categorical(logits=self.body(obs))

        def train(env, episodes=1000):
            policy = Policy().cuda()
            optimizer = torch.optim.Adam(policy.parameters())
            for episode in range(episodes):
                obs, done = env.reset(), False
                log_probs, entropies, rewards = [], [], []
                while not done:
                    dist = policy(torch.as_tensor(obs, device="cuda"))
                    action = dist.sample()
                    log_probs.append(dist.log_prob(action))
                    entropies.append(dist.entropy())
                    obs, reward, done, _ = env.step(action.item())
                    rewards.append(reward)
                loss = -(torch.stack(log_probs) * torch.tensor(rewards, device="cuda")).sum()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                print(torch.stack(entropies).mean().item())
        """
    assert confidences(source, "LL102") == {22: Confidence.LOW}
