"""JSON Lines: one finding per line, the same object as in the ``json`` format (Ruff's
``json-lines``), for tools that stream or ``grep`` the output."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Mapping

from leaklint.report.json import finding_to_dict

if TYPE_CHECKING:
    from leaklint.findings import LintResult
    from leaklint.report import ReportOptions
    from leaklint.rule import Rule


def render(result: LintResult, rules: Mapping[str, type[Rule]], options: ReportOptions) -> str:
    """One compact JSON object per finding, each on its own line (nothing when there are none)."""
    return "".join(json.dumps(finding_to_dict(finding, rules)) + "\n" for finding in result.findings)
