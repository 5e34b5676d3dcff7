"""The engine's promises: one file's problem never stops the run, and results are stable."""

from __future__ import annotations

import ast
import textwrap

import pytest
from click.testing import CliRunner
from conftest import LEAKY_LOOP, ROOT

import leaklint.registry
from leaklint.cli import main
from leaklint.config import Settings
from leaklint.engine import lint_paths, lint_text
from leaklint.findings import Confidence, ErrorKind, Severity
from leaklint.gate import read_contents
from leaklint.registry import all_rules
from leaklint.rule import Rule

FIXTURES = sorted((ROOT / "fixtures").glob("*.py"))


class ExplodingRule(Rule):
    code = "LL999"
    name = "exploding"
    severity = Severity.LEAK
    summary = "Always crashes."
    help = "none"
    docs = "## What it finds\n## Why it matters\n## Example\n## Use instead\n## Known false positives\n"

    def check(self, facts):
        raise ValueError("boom")


def test_a_crashing_rule_is_reported_with_file_and_rule_and_the_others_still_run(tmp_path):
    (tmp_path / "train.py").write_text(LEAKY_LOOP)
    rules = [ExplodingRule, *all_rules().values()]
    result, _ = lint_paths([str(tmp_path / "train.py")], rules, Settings())
    [error] = result.errors
    assert error.kind is ErrorKind.INTERNAL and error.rule == "LL999"
    assert "ValueError: boom" in error.reason
    assert [f.code for f in result.findings] == ["LL101"]


def test_the_cli_reports_a_crashing_rule_without_a_traceback(tmp_path, monkeypatch):
    (tmp_path / "train.py").write_text(LEAKY_LOOP)
    monkeypatch.chdir(tmp_path)
    rules = {"LL999": ExplodingRule, **all_rules()}
    monkeypatch.setattr(leaklint.registry, "all_rules", lambda: rules)
    result = CliRunner().invoke(main, ["--select", "ALL", "train.py"])
    assert result.exit_code == 2
    assert "train.py: error (rule LL999): internal error in rule LL999: ValueError: boom" in result.stderr
    assert "Traceback" not in result.stderr
    assert "train.py:10:9: LL101" in result.stdout


def test_a_file_no_enabled_rule_cares_about_is_not_linted():
    source = "from tensorflow import keras\nclf = keras.Sequential()\nfor x in xs:\n    clf.predict(x[None])\n"
    tf_rule = all_rules()["LL501"]
    torch_rule = all_rules()["LL101"]
    assert lint_text(source, "a.py", [torch_rule], Settings()).findings == []
    assert [f.code for f in lint_text(source, "a.py", [tf_rule], Settings()).findings] == ["LL501"]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_the_gate_changes_no_finding_on_the_fixtures(path):
    """Every rule at every confidence: the gated run and a run that parses everything agree, and
    the rules whose needs the fixture does not meet find nothing in it even when forced to look."""
    text = path.read_text(encoding="utf-8")
    rules = list(all_rules().values())
    settings = Settings(select=("ALL",), min_confidence=Confidence.LOW)
    gated = lint_text(text, str(path), rules, settings)
    ungated = lint_text(text, str(path), rules, settings, gate=False)
    assert (gated.findings, gated.errors) == (ungated.findings, ungated.errors)
    contents = read_contents(text, ast.parse(text))
    skipped = [rule for rule in rules if not rule.needs.met_by(contents)]
    if skipped:
        forced = lint_text(text, str(path), skipped, settings, gate=False)
        assert (forced.findings, forced.errors) == ([], [])


def test_findings_below_min_confidence_are_dropped():
    source = "total = 0\nfor batch in loader:\n    loss = compute(batch)\n    total += loss\n"
    rules = list(all_rules().values())
    assert lint_text(source, "a.py", rules, Settings()).findings == []
    [finding] = lint_text(source, "a.py", rules, Settings(min_confidence=__import__("leaklint.findings").findings.Confidence.LOW)).findings
    assert finding.confidence.value == "low"


def test_suppression_on_the_first_or_last_line_of_a_statement():
    source = textwrap.dedent(
        """\
        total = 0
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            total = (total +  # noqa: LL101
                     loss)
            total = (total +
                     loss)  # leaklint: ignore[LL101]
            total = (total +
                     loss)
        """
    )
    findings = lint_text(source, "a.py", list(all_rules().values()), Settings()).findings
    assert [(f.line, f.code) for f in findings] == [(9, "LL101")]


def test_a_foreign_noqa_code_does_not_suppress():
    source = LEAKY_LOOP.replace("total_loss += loss", "total_loss += loss  # noqa: E501")
    findings = lint_text(source, "a.py", list(all_rules().values()), Settings()).findings
    assert [f.code for f in findings] == ["LL101"]


def test_per_file_ignores_apply_to_the_reported_path(tmp_path):
    settings = Settings(per_file_ignores=(("scripts/*.py", ("LL1",)),), root=tmp_path)
    rules = list(all_rules().values())
    assert lint_text(LEAKY_LOOP, str(tmp_path / "scripts" / "a.py"), rules, settings).findings == []
    assert lint_text(LEAKY_LOOP, str(tmp_path / "src" / "a.py"), rules, settings).findings != []


# --- memory between files ------------------------------------------------------------------------
_WITH_A_FINDING = """\
import torch

def train(model, loader, optimizer):
    losses = []
    for batch in loader:
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()
        losses.append(loss)
    return losses
"""
_WITHOUT_FINDINGS = _WITH_A_FINDING.replace("losses.append(loss)", "losses.append(loss.item())")


@pytest.mark.parametrize("source", [_WITH_A_FINDING, _WITHOUT_FINDINGS], ids=["finding", "clean"])
def test_a_linted_file_leaves_no_analysis_to_the_cyclic_collector(source):
    """Reference counting frees a file's trees and facts as soon as it is linted: a cycle would
    leave them to the collector, which pauses while a file is linted and would then walk them."""
    import gc

    from leaklint.analysis.facts import ModuleFacts

    gc.collect()
    gc.disable()
    try:
        outcome = lint_text(source, "train.py", list(all_rules().values()), Settings())
        # exact types: isinstance() on every live object would touch torch's deprecated attributes
        left = [o for o in gc.get_objects() if type(o) is ModuleFacts]
    finally:
        gc.enable()
    assert [f.code for f in outcome.findings] == (["LL102"] if source is _WITH_A_FINDING else [])
    assert left == []


def test_the_collector_is_running_again_after_a_file_and_was_paused_during_it(monkeypatch):
    import gc

    import leaklint.engine as engine

    seen = []
    real_check_syntax = engine.check_syntax
    monkeypatch.setattr(engine, "check_syntax", lambda text, path: seen.append(gc.isenabled()) or real_check_syntax(text, path))
    assert gc.isenabled()
    lint_text(_WITH_A_FINDING, "train.py", list(all_rules().values()), Settings())
    assert seen == [False]
    assert gc.isenabled()
