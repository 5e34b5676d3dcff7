"""GitLab Code Quality: the JSON list a merge request widget reads (``artifacts: reports:
codequality``), as Ruff's ``gitlab`` format writes it.

Each finding has a ``description`` (``LL101: message``), a ``check_name`` (the code), a
``severity`` (leaks and peaks ``major``, perf findings ``minor``), a ``location`` (the path relative
to ``CI_PROJECT_DIR`` when GitLab sets it, else as shown, and the lines; a notebook finding names
the ``.ipynb`` file and the cell's line) and a ``fingerprint`` that survives lines being inserted
above it (:mod:`leaklint.fingerprints`), which is how GitLab tells new findings from old ones.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Mapping

from leaklint.findings import Severity
from leaklint.report._paths import printable
from leaklint.report._source import SourceLines

if TYPE_CHECKING:
    from leaklint.findings import Finding, LintResult
    from leaklint.report import ReportOptions
    from leaklint.rule import Rule


def render(result: LintResult, rules: Mapping[str, type[Rule]], options: ReportOptions) -> str:
    """The findings as an indented GitLab Code Quality report (``[]`` when there are none)."""
    from leaklint.fingerprints import fingerprints

    project = os.environ.get("CI_PROJECT_DIR")
    issues = [_issue(finding, print_, project) for finding, print_ in fingerprints(result.findings, SourceLines(options.sources))]
    return json.dumps(issues, indent=2) + "\n"


def _issue(finding: Finding, fingerprint: str, project: str | None) -> dict[str, Any]:
    where = f" (cell {finding.cell})" if finding.cell is not None else ""
    return {
        "description": f"{finding.code}: {finding.message}{where}",
        "check_name": finding.code,
        "fingerprint": fingerprint,
        "severity": "minor" if Severity(finding.severity) is Severity.PERF else "major",
        "location": {"path": printable(_relative(finding.path, project)), "lines": {"begin": finding.line, "end": finding.end_line}},
    }


def _relative(path: str, project: str | None) -> str:
    if not project or path == "-":
        return path
    try:
        return os.path.relpath(os.path.abspath(path), project)
    except ValueError:  # another drive on Windows
        return path
