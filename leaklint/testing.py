"""Helpers for testing rules (ours and third-party packs): expectations written in the code.

A line ending in ``# expect: LL101`` (or ``# expect: LL101, LL102``) must produce exactly those
findings; every other line must produce none. Rule examples (``VALID``/``INVALID``) and the
``fixtures/`` scripts both use this convention, so a test reads like the code it checks.
"""

from __future__ import annotations

import re
import textwrap
from typing import Iterable

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
