"""Helpers for testing rules (ours and third-party packs): expectations written in the code.

A line ending in ``# expect: LL101`` (or ``# expect: LL101, LL102``) must produce exactly those
findings; every other line must produce none. In a notebook the comment marks a line of a code
cell, and the finding must be in that cell. Rule examples (``VALID``/``INVALID``) and the
``fixtures/`` scripts both use this convention, so a test reads like the code it checks.
"""

from __future__ import annotations

import re
import textwrap
from typing import Iterable, Sequence

from leaklint.config import Settings
from leaklint.engine import lint_text
from leaklint.findings import Confidence, FileError, Finding
from leaklint.registry import all_rules
from leaklint.rule import Rule

_EXPECT = re.compile(r"#\s*expect:\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)")


def expected_findings(source: str) -> set[tuple[int, str]]:
    """``(line, code)`` pairs marked with ``# expect:`` comments."""
    expected = set()
    for number, line in enumerate(source.splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            expected.update((number, code.strip()) for code in match.group(1).split(","))
    return expected


def expected_cell_findings(notebook_text: str) -> set[tuple[int, int, str]]:
    """``(cell, line, code)`` triples marked with ``# expect:`` comments in a notebook's code cells."""
    from leaklint.notebook import Notebook

    notebook = Notebook.parse(notebook_text)
    return {
        (cell.number, line, code)
        for cell in notebook.cells
        if cell.kind == "code"
        for line, code in expected_findings(cell.source)
    }


def lint_snippet(
    source: str,
    rules: Iterable[type[Rule]] | None = None,
    *,
    path: str = "snippet.py",
    min_confidence: Confidence = Confidence.MEDIUM,
) -> tuple[list[Finding], list[FileError]]:
    """Lint a code snippet (dedented) with ``rules`` (default: every known rule)."""
    chosen = list(rules) if rules is not None else list(all_rules().values())
    outcome = lint_text(textwrap.dedent(source), path, chosen, Settings(min_confidence=min_confidence))
    return outcome.findings, outcome.errors


def found_pairs(findings: Iterable[Finding]) -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in findings}


def found_cell_triples(findings: Iterable[Finding]) -> set[tuple[int | None, int, str]]:
    return {(f.cell, f.line, f.code) for f in findings}


GATE_LEVELS = (Confidence.LOW, Confidence.MEDIUM, Confidence.HIGH)


def gate_differences(text: str, path: str, rules: Sequence[type[Rule]]) -> list[str]:
    """What the gate (:mod:`leaklint.gate`) changes in a lint of ``text`` with ``rules``: for
    each confidence, the findings of an ungated run at or above it that a gated run misses, or
    reports differently (message, confidence, fix). Empty when the gate only skips work, which is
    all it may do. A found problem (libcst cannot parse the file, too deep) may go: it matters only where the
    analysis is needed."""
    codes = tuple(rule.code for rule in rules)
    ungated = lint_text(text, path, rules, Settings(select=codes, min_confidence=Confidence.LOW), gate=False)
    differences: list[str] = []
    for level in GATE_LEVELS:
        expected = [f for f in ungated.findings if f.confidence >= level]
        gated = lint_text(text, path, rules, Settings(select=codes, min_confidence=level), gate=True)
        differences += [f"{path}:{f.line}:{f.column}: {f.code} ({f.confidence}) hidden by the gate at {level}" for f in expected if f not in gated.findings]
        differences += [f"{path}:{f.line}:{f.column}: {f.code} ({f.confidence}) differs with the gate at {level}" for f in gated.findings if f not in expected]
        # (Errors may only go: libcst's limits matter only to files the analysis needs.)
        differences += [f"{path}: error {e.kind.value} only with the gate at {level}" for e in gated.errors if e not in ungated.errors]
    return differences
