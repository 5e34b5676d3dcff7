"""``leaklint run SCRIPT``: the user's own training script under the meters, stopped after
``--steps`` optimizer steps, its static findings joined with what was measured."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap

import pytest
from click.testing import CliRunner

from leaklint import cli

TRAINING = textwrap.dedent(
    """\
    import sys
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    criterion = nn.MSELoss()
    data = [(torch.randn(8, 16), torch.randn(8, 1)) for _ in range(100)]
    ARGV = list(sys.argv)

    total = 0
    for inputs, targets in data:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total += loss
    raise AssertionError("leaklint run should have stopped the script before its end")
    """
)
LEAK_LINE = TRAINING.splitlines().index("    total += loss") + 1


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def invoke(*args: str):
    return CliRunner().invoke(cli.main, ["run", *args])


def test_without_torch_it_is_one_line_and_exit_2(tmp_path, monkeypatch):
    script = write(tmp_path, "train.py", TRAINING)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    result = invoke(script)
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "needs torch" in result.output


torch = pytest.importorskip("torch")


def test_a_leaky_script_grows_and_its_ll101_line_is_confirmed(tmp_path):
    script = write(tmp_path, "train.py", TRAINING)
    argv = sys.argv[:]
    result = invoke("--format", "json", script, "--lr", "3")
    assert result.exit_code == 1, result.output
    assert sys.argv == argv
    document = json.loads(result.output)
    assert document["grows"] and document["host"]["grows"] and document["steps"] == 30
    confirmed = [f for f in document["findings"] if f["code"] == "LL101"]
    assert confirmed and confirmed[0]["line"] == LEAK_LINE and confirmed[0]["status"] == "confirmed"


def test_the_fixed_script_stays_flat(tmp_path):
    script = write(tmp_path, "train.py", TRAINING.replace("total += loss\n", "total += loss.item()\n"))
    result = invoke(script)
    assert result.exit_code == 0, result.output
    assert "stays within its tolerances" in result.output
    assert "static findings: none" in result.output


def test_the_script_sees_its_own_argv(tmp_path):
    from leaklint.runtime.run import run_script

    hook = "ARGV = list(sys.argv)\n"
    script = write(tmp_path, "train.py", TRAINING.replace(hook, hook + "import builtins; builtins._leaklint_argv = ARGV\n"))
    result = run_script(script, ["--lr", "3"], steps=12, warmup=3)
    import builtins

    seen = builtins.__dict__.pop("_leaklint_argv")
    assert seen == [script, "--lr", "3"] and result.steps == 12


def test_a_script_that_raises_is_one_line_and_exit_2(tmp_path):
    script = write(tmp_path, "bad.py", "import torch\nraise ValueError('boom')\n")
    result = invoke(script)
    assert result.exit_code == 2
    assert result.output.strip() == f"leaklint: error: {script} raised ValueError: boom"


def test_a_script_that_ends_before_steps_is_exit_2(tmp_path):
    script = write(tmp_path, "short.py", TRAINING.replace("range(100)", "range(4)").replace("raise AssertionError", "print"))
    result = invoke(script)
    assert result.exit_code == 2
    assert "finished after 4 step(s)" in result.output


def test_join_names_unreachable_findings_and_unexplained_growth(tmp_path):
    from leaklint.findings import Confidence, Finding, Severity
    from leaklint.runtime.attribution import Site
    from leaklint.runtime.guard import GrowthReport
    from leaklint.runtime.join import NOT_REACHABLE, join
    from leaklint.runtime.run import RunResult

    script = write(tmp_path, "train.py", TRAINING)
    finding = Finding(script, 40, 5, 40, 9, "LL101", "loss-accumulation", Severity.LEAK, Confidence.HIGH, "m", "h")
    report = GrowthReport("cpu", 8192.0, 4096.0, 10, 5, (), (Site(f"{script}:7", 8192.0, 1.0),), 0.0, 1024.0)
    joined = join([finding], RunResult(script, "optimizer.step()", 30, 5, report, {script: {7, 8}}))
    assert joined.findings[0].status == NOT_REACHABLE
    assert [site.where for site in joined.unexplained_sites] == [f"{script}:7"]
