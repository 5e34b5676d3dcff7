"""tools/new_rule.py: the skeleton it writes is a complete rule that passes what every rule must."""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT

from leaklint.config import Settings
from leaklint.engine import lint_file
from leaklint.gate import read_contents
from leaklint.registry import all_rules, validate_rule
from leaklint.testing import expected_findings, found_pairs, lint_snippet

TOOL = ROOT / "tools" / "new_rule.py"


def scaffold(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), *args, "--root", str(root)], capture_output=True, text=True, timeout=120)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the parts of the checkout the tool writes to."""
    for part in ("rules", "fixtures"):
        shutil.copytree(ROOT / part, tmp_path / part)
    return tmp_path


def load_rule(path: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(f"scaffolded_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    [rule] = [value for value in vars(module).values() if isinstance(value, type) and getattr(value, "code", None) == "LL601"]
    return rule


def test_the_skeleton_is_a_rule_that_passes_every_rule_check(checkout: Path) -> None:
    done = scaffold(checkout, "LL601", "example-in-loop")
    assert done.returncode == 0, done.stderr
    module = checkout / "rules" / "ll601_example_in_loop.py"
    fixture = checkout / "fixtures" / "leaky_example_in_loop.py"
    assert "wrote rules/ll601_example_in_loop.py and fixtures/leaky_example_in_loop.py" in done.stdout
    rule = load_rule(module)
    validate_rule(rule)  # code, name, every docs section
    assert rule.has_repro() and rule.Repro.leaky is not rule.__mro__[1].Repro.leaky
    assert len(rule.VALID) >= 2 and len(rule.INVALID) >= 2
    for snippet in rule.VALID:
        assert lint_snippet(snippet, [rule]) == ([], [])
    for snippet in rule.INVALID:
        source = textwrap.dedent(snippet)
        findings, errors = lint_snippet(source, [rule])
        assert errors == [] and found_pairs(findings) == expected_findings(source)
        assert rule.needs.met_by(read_contents(source, ast.parse(source)))
    # The fixture demonstrates it, and no other rule fires there.
    text = fixture.read_text()
    outcome = lint_file(str(fixture), [*all_rules().values(), rule], Settings(select=("ALL",)))
    assert outcome.errors == [] and found_pairs(outcome.findings) == expected_findings(text) == {(9, "LL601")}
    assert "TODO" in module.read_text()  # what the author still has to write is marked


def test_a_skeleton_can_be_asked_for_another_severity(checkout: Path) -> None:
    assert scaffold(checkout, "LL602", "slow-thing", "--severity", "perf").returncode == 0
    assert "severity = Severity.PERF" in (checkout / "rules" / "ll602_slow_thing.py").read_text()


@pytest.mark.parametrize(
    "args, message",
    [
        (["LL6", "x-y"], "bad rule code 'LL6'"),
        (["LL601", "Not_Kebab"], "bad rule name 'Not_Kebab'"),
        (["LL101", "again"], "LL101 is taken: ll101_loss_accumulation.py"),
    ],
)
def test_bad_codes_names_and_taken_codes_are_refused(checkout: Path, args: list[str], message: str) -> None:
    done = scaffold(checkout, *args)
    assert done.returncode == 2 and message in done.stderr
    assert sorted(p.name for p in (checkout / "rules").glob("ll6*.py")) == []
