"""Every fix, on every example it applies to: the result compiles, re-linting finds none of the
fixed findings, and fixing again changes nothing (``--fix`` is idempotent)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT

from leaklint.config import Settings
from leaklint.engine import lint_text
from leaklint.findings import Applicability
from leaklint.fixes.fixer import fix_text
from leaklint.registry import all_rules

RULES = all_rules()
ALL_RULES = list(RULES.values())
FIXTURES = sorted((ROOT / "fixtures").glob("*.py"))
SETTINGS = Settings()

INVALID_EXAMPLES = [
    pytest.param(textwrap.dedent(example), id=f"{code}-invalid-{number}")
    for code, rule in sorted(RULES.items())
    if rule.fixable
    for number, example in enumerate(rule.INVALID, start=1)
]


def applicable(findings):
    return [f for f in findings if f.fix is not None and f.fix.applicability is not Applicability.DISPLAY_ONLY]


def assert_fix_is_complete_and_idempotent(source: str, path: str) -> None:
    before = lint_text(source, path, ALL_RULES, SETTINGS)
    fixed = fix_text(source, path, ALL_RULES, SETTINGS, unsafe=True)
    assert fixed.errors == [], [e.describe() for e in fixed.errors]
    ast.parse(fixed.fixed)  # the fixed file parses
    assert len(fixed.applied) >= min(1, len(applicable(before.findings)))
    relinted = lint_text(fixed.fixed, path, ALL_RULES, SETTINGS)
    assert relinted.errors == []
    assert applicable(relinted.findings) == [], [f"{f.line}: {f.code} {f.message}" for f in applicable(relinted.findings)]
    again = fix_text(fixed.fixed, path, ALL_RULES, SETTINGS, unsafe=True)
    assert again.fixed == fixed.fixed and again.applied == []


@pytest.mark.parametrize("source", INVALID_EXAMPLES)
def test_fixing_every_invalid_example_is_complete_and_idempotent(source):
    assert_fix_is_complete_and_idempotent(source, "example.py")


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_fixing_every_fixture_is_complete_and_idempotent(fixture):
    assert_fix_is_complete_and_idempotent(fixture.read_text(encoding="utf-8"), fixture.name)


def test_the_examples_exercise_fixes_of_every_fixable_rule():
    fixed_codes = set()
    for param in INVALID_EXAMPLES:
        fixed_codes |= {f.code for f in applicable(lint_text(param.values[0], "example.py", ALL_RULES, SETTINGS).findings)}
    assert fixed_codes >= {code for code, rule in RULES.items() if rule.fixable and code != "LL404"}


def test_safe_fixes_alone_leave_unsafe_ones_in_place():
    source = textwrap.dedent(
        """\
        import torch

        def evaluate(model, loader):
            model.eval()
            total = 0
            for x, y in loader:
                loss = torch.nn.functional.cross_entropy(model(x), y)
                total += loss
            return total
        """
    )
    safe_only = fix_text(source, "e.py", ALL_RULES, SETTINGS, unsafe=False)
    assert "total += loss.detach()" in safe_only.fixed
    assert "no_grad" not in safe_only.fixed
    assert {f.code for f in safe_only.remaining} == {"LL201"}
    everything = fix_text(source, "e.py", ALL_RULES, SETTINGS, unsafe=True)
    assert "@torch.no_grad()\ndef evaluate" in everything.fixed
