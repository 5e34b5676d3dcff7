"""``--statistics``: how many findings each rule reports, instead of the findings (as Ruff's).

Text: one line per rule, most findings first, ``[*]`` where some of its findings have a safe fix
(``--fix`` applies it), ``[ ]`` otherwise::

    12	LL201	[ ] eval-without-no-grad
     3	LL101	[*] loss-accumulation

``--output-format json`` (and json-lines) gives the same as a list of ``{"code", "name", "count",
"fixable"}`` objects; the other formats fall back to the text table.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any, Mapping

from leaklint.findings import Applicability

if TYPE_CHECKING:
    from leaklint.findings import LintResult
    from leaklint.rule import Rule


def statistics(result: LintResult, rules: Mapping[str, type[Rule]]) -> list[dict[str, Any]]:
    """Per rule with findings: code, name, count and whether a safe fix exists, most findings first."""
    counts = Counter(finding.code for finding in result.findings)
    fixable = {f.code for f in result.findings if f.fix is not None and f.fix.applicability is Applicability.SAFE}
    names = {f.code: f.name for f in result.findings}
    ordered = sorted(counts, key=lambda code: (-counts[code], code))
    return [
        {"code": code, "name": getattr(rules.get(code), "name", names[code]), "count": counts[code], "fixable": code in fixable}
        for code in ordered
    ]


def render_statistics(result: LintResult, rules: Mapping[str, type[Rule]], output_format: str) -> str:
    rows = statistics(result, rules)
    if output_format == "json":
        return json.dumps(rows, indent=2) + "\n"
    if output_format == "json-lines":
        return "".join(json.dumps(row) + "\n" for row in rows)
    width = max((len(str(row["count"])) for row in rows), default=1)
    return "".join(f"{row['count']:>{width}}\t{row['code']}\t{'[*]' if row['fixable'] else '[ ]'} {row['name']}\n" for row in rows)
