"""``leaklint run SCRIPT``: the user's own training script under the meters, stopped after
``--steps`` optimizer steps, its static findings joined with what was measured."""

from __future__ import annotations

import importlib.util
import json
import os
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
    joined = join([finding], RunResult(script, "optimizer.step()", 30, 5, report, {script: {7: 25, 8: 25}}))
    assert joined.findings[0].status == NOT_REACHABLE
    assert [site.where for site in joined.unexplained_sites] == [f"{script}:7"]


EVALUATION = textwrap.dedent(
    """\
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 8))
    batches = [torch.randn(32, 64) for _ in range(60)]
    kept = []


    def evaluate_batch(inputs):
        scores = model(inputs)
        kept.append(scores)
        return scores.argmax(1)


    for inputs in batches:
        evaluate_batch(inputs)
    """
)


def test_an_evaluation_script_needs_step_and_then_its_collection_is_confirmed(tmp_path):
    script = write(tmp_path, "evaluate.py", EVALUATION)
    result = invoke(script)
    assert result.exit_code == 2 and "--step module:function" in result.output
    result = invoke("--format", "json", "--step", "__main__:evaluate_batch", script)
    assert result.exit_code == 1, result.output
    document = json.loads(result.output)
    assert document["boundary"] == "evaluate_batch"
    keep = EVALUATION.splitlines().index("    kept.append(scores)") + 1
    statuses = {(f["line"], f["code"]): f["status"] for f in document["findings"]}
    assert statuses[(keep, "LL102")] == "confirmed"
    forward = EVALUATION.splitlines().index("    scores = model(inputs)") + 1
    assert "evaluate.py:%d" % forward in next(f["evidence"] for f in document["findings"] if f["line"] == keep)
    # The forward without no_grad is a peak rule's finding; its outputs are measured to pile up.
    peak = next(f for f in document["findings"] if (f["line"], f["code"]) == (forward, "LL201"))
    assert peak["status"] == "confirmed" and "more than the peak" in peak["evidence"]


def test_the_step_function_may_be_named_by_the_script_module_name_and_fixed_stays_flat(tmp_path):
    script = write(tmp_path, "evaluate.py", EVALUATION.replace("kept.append(scores)", "kept.append(scores.argmax(1).tolist())"))
    result = invoke("--step", "evaluate:evaluate_batch", script)
    assert result.exit_code == 0, result.output


def test_a_bad_step_is_a_usage_error(tmp_path):
    script = write(tmp_path, "evaluate.py", EVALUATION)
    assert invoke("--step", "evaluate_batch", script).exit_code == 2
    result = invoke("--step", "nosuchmodule:f", script)
    assert result.exit_code == 2 and "nosuchmodule" in result.output
    result = invoke("--step", "__main__:never_called", script)
    assert result.exit_code == 2 and "without ever returning from never_called" in result.output


BACKWARD_ONLY = textwrap.dedent(
    """\
    import torch

    weights = torch.randn(64, 64, requires_grad=True)
    history = []
    for _ in range(80):
        loss = (torch.randn(16, 64) @ weights).pow(2).mean()
        loss.backward()
        with torch.no_grad():
            weights -= 0.01 * weights.grad
            weights.grad = None
        history.append(loss)
    """
)


def test_without_an_optimizer_the_backward_passes_are_the_steps(tmp_path):
    script = write(tmp_path, "manual.py", BACKWARD_ONLY)
    result = invoke("--format", "json", script)
    assert result.exit_code == 1, result.output
    document = json.loads(result.output)
    assert document["boundary"] == "backward()"
    keep = BACKWARD_ONLY.splitlines().index("    history.append(loss)") + 1
    assert any(f["line"] == keep and f["status"] == "confirmed" for f in document["findings"])


ENGINE = textwrap.dedent(
    """\
    def train_epoch(model, optimizer, criterion, batches):
        losses = []
        for inputs, targets in batches:
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            optimizer.step()
            losses.append(loss)
        return losses
    """
)


def test_a_loop_in_an_imported_project_module_is_traced_linted_and_its_finding_confirmed(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'toy'\n")
    write(tmp_path, "engine.py", ENGINE)
    head = TRAINING[: TRAINING.index("total = 0")]
    script = write(tmp_path, "train.py", head + "from engine import train_epoch\ntrain_epoch(model, optimizer, criterion, data)\n")
    result = invoke("--format", "json", script)
    assert result.exit_code == 1, result.output
    document = json.loads(result.output)
    assert sorted(os.path.basename(path) for path in document["linted"]) == ["engine.py", "train.py"]
    keep = ENGINE.splitlines().index("        losses.append(loss)") + 1
    found = [(os.path.basename(f["path"]), f["line"], f["status"]) for f in document["findings"]]
    assert found == [("engine.py", keep, "confirmed")], found


def test_plot_draws_memory_per_step(tmp_path):
    pytest.importorskip("matplotlib")
    script = write(tmp_path, "train.py", TRAINING)
    picture = tmp_path / "memory.png"
    result = invoke("--plot", str(picture), script)
    assert result.exit_code == 1, result.output
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


WORKERS = textwrap.dedent(
    """\
    import numpy as np
    import torch
    from torch.utils.data import DataLoader, Dataset


    class Records(Dataset):
        def __init__(self, n):
            self.rows = [[float(i), float(i) * 2.0, str(i)] for i in range(n)]

        def __len__(self):
            return len(self.rows)

        def __getitem__(self, index):
            row = self.rows[index]
            return torch.tensor([row[0], row[1]])


    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Records(300_000), batch_size=256, shuffle=True, num_workers=2)
    for batch in loader:
        optimizer.zero_grad()
        model(batch).sum().backward()
        optimizer.step()
    """
)


def test_dataloader_workers_are_measured_when_a_finding_is_about_them(tmp_path):
    pytest.importorskip("psutil")
    script = write(tmp_path, "workers.py", WORKERS)
    result = invoke("--format", "json", "--steps", "16", "--warmup", "4", script)
    assert result.exit_code == 1, result.output
    document = json.loads(result.output)
    assert document["workers"]["grows"], document["workers"]
    assert [(f["code"], f["status"]) for f in document["findings"]] == [("LL302", "confirmed")]


def test_json_stays_parseable_when_the_script_prints(tmp_path):
    script = write(tmp_path, "train.py", TRAINING.replace("    total += loss\n", "    total += loss\n    print('step', float(loss))\n"))
    result = CliRunner().invoke(cli.main, ["run", "--format", "json", script])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["grows"]
    assert "step " in result.stderr


def test_a_step_function_of_unequal_work_per_call_is_not_growth(tmp_path):
    generate = textwrap.dedent(
        """\
        import torch

        weights = torch.randn(256, 256)


        def generate(tokens):
            scratch = [torch.randn(64, 256) @ weights for _ in range(tokens)]
            return len(scratch)


        for index in range(80):
            generate(16 if index % 2 else 2)
        """
    )
    script = write(tmp_path, "generate.py", generate)
    result = invoke("--step", "__main__:generate", script)
    assert result.exit_code == 0, result.output


def test_device_cuda_without_a_cuda_device_is_a_usage_error(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    script = write(tmp_path, "train.py", TRAINING)
    result = invoke("--device", "cuda", script)
    assert result.exit_code == 2 and "no CUDA device" in result.output
