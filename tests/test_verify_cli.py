"""``leaklint verify``: a real subcommand with a table, stable JSON, a plot, and honest exit codes."""

from __future__ import annotations

import importlib.util
import json

import pytest
from click.testing import CliRunner

from leaklint import cli
from leaklint.findings import Severity
from leaklint.rule import Rule


def invoke(*args: str):
    return CliRunner().invoke(cli.main, ["verify", *args])


def test_without_torch_it_says_how_to_install_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    result = invoke("LL101")
    assert result.exit_code == 2
    assert "pip install 'leaklint[runtime]'" in result.output


def test_an_unknown_code_is_a_usage_error():
    result = invoke("LL999")
    assert result.exit_code == 2
    assert "unknown rule 'LL999'" in result.output


def test_verify_is_a_subcommand_not_a_path_to_lint():
    result = CliRunner().invoke(cli.main, ["verify", "--help"])
    assert result.exit_code == 0
    assert "--iterations" in result.output and "--plot" in result.output


def test_json_output_follows_the_documented_schema():
    pytest.importorskip("torch")
    result = invoke("LL102", "LL401", "LL501", "--device", "cpu", "--iterations", "6", "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert list(document) == ["schema", "leaklint", "torch", "device", "iterations", "warmup", "results", "summary"]
    assert (document["schema"], document["device"], document["iterations"], document["warmup"]) == ("leaklint.verify/1", "cpu", 6, 3)
    ll102, ll401, ll501 = document["results"]
    assert list(ll102) == ["code", "name", "severity", "device", "status", "verdict", "reason", "host_meter", "leaky", "fixed"]
    assert list(ll102["leaky"]) == [
        "growth_per_iteration", "host_growth_per_iteration", "peak", "held",
        "allocated_per_iteration", "seconds_per_iteration", "live", "host",
    ]  # fmt: skip
    assert (ll102["status"], ll102["verdict"]) == ("confirmed", "growth confirmed")
    assert len(ll102["leaky"]["live"]) == 9  # warm-up included
    assert ll102["leaky"]["growth_per_iteration"] > 4096 >= ll102["fixed"]["growth_per_iteration"]
    assert (ll401["severity"], ll401["verdict"]) == ("peak", "peak confirmed")
    if ll501["status"] == "skipped":
        assert ll501["reason"] == "tensorflow not installed" and ll501["leaky"] is None
    assert sum(document["summary"].values()) == 3


def test_the_table_and_the_plot(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    plot = tmp_path / "verify.png"
    result = invoke("LL201", "--device", "cpu", "--iterations", "4", "--plot", str(plot))
    assert result.exit_code == 0, result.output
    header, row = result.stdout.splitlines()[:2]
    assert header.split()[:4] == ["CODE", "DEVICE", "LEAKY/ITER", "FIXED/ITER"]
    assert row.startswith("LL201  cpu") and row.endswith("peak confirmed")
    assert "[1/1] LL201" in result.stderr  # progress goes to stderr
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


class NoDifference(Rule):
    """A rule whose 'fix' changes nothing: verify must not confirm it."""

    code = "XX901"
    name = "no-difference"
    severity = Severity.LEAK
    summary = help = docs = "test rule"

    class Repro(Rule.Repro):
        def setup(self, ctx):
            import torch

            ctx.x = torch.ones(64, device=ctx.device)

        def leaky(self, ctx):
            ctx.x.sum()

        fixed = leaky


def test_a_rule_its_repro_does_not_confirm_fails_the_run(monkeypatch):
    pytest.importorskip("torch")
    import leaklint.registry

    monkeypatch.setattr(leaklint.registry, "all_rules", lambda: {"XX901": NoDifference})
    result = invoke("XX901", "--device", "cpu", "--iterations", "4")
    assert result.exit_code == 1
    assert "not confirmed" in result.stdout
    assert "the rule claims leak (growth); measured: not confirmed" in result.stdout
