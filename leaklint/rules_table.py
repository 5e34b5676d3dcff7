"""The rule catalogue as a table, JSON, or the Markdown table the README embeds."""

from __future__ import annotations

import json
from typing import Mapping

from leaklint.rule import Rule

_COLUMNS = ("code", "name", "severity", "fixable", "default", "summary")


def _rows(rules: Mapping[str, type[Rule]]) -> list[dict[str, str]]:
    return [
        {
            "code": rule.code,
            "name": rule.name,
            "severity": rule.severity.value,
            "fixable": "yes" if rule.fixable else "no",
            "default": "on" if rule.default_enabled else "off",
            "summary": rule.summary,
        }
        for rule in rules.values()
    ]


def rules_as_table(rules: Mapping[str, type[Rule]]) -> str:
    rows = _rows(rules)
    widths = {c: max([len(c), *(len(r[c]) for r in rows)]) for c in _COLUMNS[:-1]}
    header = "  ".join(c.upper().ljust(widths[c]) for c in _COLUMNS[:-1]) + "  SUMMARY"
    lines = [header]
    for row in rows:
        lines.append("  ".join(row[c].ljust(widths[c]) for c in _COLUMNS[:-1]) + "  " + row["summary"])
    return "\n".join(lines) + "\n"


def rules_as_json(rules: Mapping[str, type[Rule]]) -> str:
    rows = [
        {
            "code": rule.code,
            "name": rule.name,
            "severity": rule.severity.value,
            "fixable": rule.fixable,
            "default_enabled": rule.default_enabled,
            "summary": rule.summary,
        }
        for rule in rules.values()
    ]
    return json.dumps(rows, indent=2) + "\n"


def rules_as_markdown(rules: Mapping[str, type[Rule]]) -> str:
    lines = ["| code | name | severity | fixable | on by default | what it finds |", "| --- | --- | --- | --- | --- | --- |"]
    for row in _rows(rules):
        lines.append(
            f"| {row['code']} | {row['name']} | {row['severity']} | {row['fixable']} | "
            f"{'yes' if row['default'] == 'on' else 'no'} | {row['summary']} |"
        )
    return "\n".join(lines) + "\n"
