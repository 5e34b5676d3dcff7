"""A JSON list of findings, for scripts and editor integrations.

Keys appear in a fixed, documented order (location first, then identity, then text) rather than
sorted, so the output reads naturally and diffs stay stable. ``runtime`` is the command that
measures the rule's repro (``leaklint verify LL101``), ``null`` for a rule without one. ``fix`` is ``null`` when the rule has
no fix for the finding, else its title, applicability (``safe``/``unsafe``/``display-only``) and
edits (1-based lines and columns, end exclusive; ``content`` replaces the span). A byte of a file
name that is not UTF-8 is written as U+FFFD (:mod:`leaklint.report._paths`). File errors are
not part of the list: the CLI reports them on stderr and through the exit code (2).

In a Jupyter notebook a finding has a ``cell`` key after ``path`` (the cell's number, 1-based,
markdown cells counted) and its lines are lines of that cell; each fix edit has its own ``cell``
(an added import may go into another cell than the finding). Findings in Python files have no
``cell`` key.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping

from leaklint.report._paths import printable

if TYPE_CHECKING:
    from leaklint.findings import Finding, Fix, LintResult
    from leaklint.report import ReportOptions
    from leaklint.rule import Rule


def render(result: LintResult, rules: Mapping[str, type[Rule]], options: ReportOptions) -> str:
    """Render the findings as an indented JSON array (``[]`` when there are none)."""
    return json.dumps([finding_to_dict(finding, rules) for finding in result.findings], indent=2) + "\n"


def runtime_command(code: str, rules: Mapping[str, type[Rule]]) -> str | None:
    """The command that measures the rule's repro, or None when the rule has none."""
    rule = rules.get(code)
    return f"leaklint verify {code}" if rule is not None and rule.has_repro() else None


def finding_to_dict(finding: Finding, rules: Mapping[str, type[Rule]] | None = None) -> dict[str, Any]:
    """One finding as a JSON-ready dict, keys in output order."""
    return {
        "path": printable(finding.path),
        **({"cell": finding.cell} if finding.cell is not None else {}),
        "line": finding.line,
        "column": finding.column,
        "end_line": finding.end_line,
        "end_column": finding.end_column,
        "code": finding.code,
        "name": finding.name,
        "severity": str(finding.severity),
        "confidence": str(finding.confidence),
        "message": finding.message,
        "help": finding.help,
        "fix": fix_to_dict(finding.fix) if finding.fix is not None else None,
        "runtime": runtime_command(finding.code, rules or {}),
    }


def fix_to_dict(fix: Fix) -> dict[str, Any]:
    return {
        "message": fix.title,
        "applicability": str(fix.applicability),
        "edits": [
            {
                "content": edit.replacement,
                **({"cell": edit.cell} if edit.cell is not None else {}),
                "location": {"line": edit.line, "column": edit.column},
                "end_location": {"line": edit.end_line, "column": edit.end_column},
            }
            for edit in fix.edits
        ],
    }
