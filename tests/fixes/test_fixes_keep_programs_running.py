"""A fix never breaks a working program: every rule example and regression program that runs
under torch as written still runs after ``--fix --unsafe-fixes`` (issue 21).

Compiling is not enough: detaching REINFORCE's log-probs compiles, then the episode's backward
raises "element 0 of tensors does not require grad"; ``zero_grad()`` instead of
``zero_grad(set_to_none=False)`` compiles, then ``p.grad += noise`` meets ``None``. So the programs
run, once as written and once fixed (``example_runner.py``, in one subprocess); a program that does
not run as written (a name the snippet leaves free, a missing library) says nothing and is skipped.
The fixtures are left out: they are whole training scripts that need data, GPUs or libraries this
environment lacks, or train for longer than a test may take.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from leaklint.config import Settings
from leaklint.fixes.fixer import fix_text
from leaklint.registry import all_rules

pytest.importorskip("torch")

RULES = all_rules()
RUNNER = Path(__file__).with_name("example_runner.py")
#: The examples that must run as written, or the check has lost its teeth (19 ran when it was written).
AT_LEAST_RUN = 15

# Programs whose fixes once broke them (bench/realcode triage, issue 21).
REINFORCE = """\
import torch
import torch.nn as nn

policy = nn.Linear(4, 2)
optimizer = torch.optim.Adam(policy.parameters())
for episode in range(3):
    saved_log_probs, rewards = [], []
    for t in range(5):
        dist = torch.distributions.Categorical(policy(torch.randn(4)).softmax(-1))
        action = dist.sample()
        saved_log_probs.append(dist.log_prob(action))
        rewards.append(1.0)
    loss = -torch.stack(saved_log_probs).sum() * sum(rewards)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
GRADIENT_NOISE = """\
import torch
import torch.nn as nn

model = nn.Linear(8, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.randn(2, 8)).sum().backward()
for step in range(3):
    optimizer.zero_grad(set_to_none=False)
    for p in model.parameters():
        p.grad += 1e-3 * torch.randn_like(p)
    model(torch.randn(2, 8)).sum().backward()
    optimizer.step()
"""


def _programs() -> dict[str, str]:
    programs = {"regression: REINFORCE": REINFORCE, "regression: gradient noise": GRADIENT_NOISE}
    for code, rule in sorted(RULES.items()):
        for number, example in enumerate(rule.INVALID, 1):
            programs[f"{code} INVALID example {number}"] = textwrap.dedent(example)
    return programs


def _fixed_pairs() -> list[dict[str, str]]:
    pairs = []
    for name, source in _programs().items():
        outcome = fix_text(source, "example.py", list(RULES.values()), Settings(), unsafe=True)
        assert outcome.errors == [], (name, [error.describe() for error in outcome.errors])
        if outcome.fixed != source or name.startswith("regression"):
            pairs.append({"id": name, "original": source, "fixed": outcome.fixed})
    return pairs


def test_fixed_programs_run_wherever_the_originals_ran(tmp_path):
    pairs = _fixed_pairs()
    report = tmp_path / "results.json"
    subprocess.run(
        [sys.executable, str(RUNNER), str(report)], input=json.dumps(pairs), capture_output=True,
        text=True, cwd=tmp_path, timeout=900, check=True,
    )
    results = json.loads(report.read_text(encoding="utf-8"))
    ran = [result for result in results if result["original"] == "ok"]
    broken = [f"{result['id']}: {result['fixed']}" for result in ran if result["fixed"] != "ok"]
    assert broken == []
    assert len(ran) >= AT_LEAST_RUN, [f"{r['id']}: {r['original']}" for r in results]
    assert {"regression: REINFORCE", "regression: gradient noise"} <= {result["id"] for result in ran}
