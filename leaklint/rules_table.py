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
            "default": "on" if rule.default_enabled else ("preview" if rule.measured is not None else "off"),
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
            "measured": None if rule.measured is None else {
                "realcode": dict(zip(("true", "false", "debatable"), rule.measured.realcode)),
                "leaks": dict(zip(("true", "false"), rule.measured.leaks)),
            },
        }
        for rule in rules.values()
    ]
    return json.dumps(rows, indent=2) + "\n"


def rules_as_markdown(rules: Mapping[str, type[Rule]]) -> str:
    lines = [
        "| code | name | severity | fixable | on by default | precision on real code | what it finds |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for rule, row in zip(rules.values(), _rows(rules)):
        default = {"on": "yes", "preview": "preview", "off": "no"}[row["default"]]
        lines.append(
            f"| {row['code']} | {row['name']} | {row['severity']} | {row['fixable']} | "
            f"{default} | {_precision(rule)} | {row['summary']} |"
        )
    return "\n".join(lines) + "\n"


def _precision(rule: type[Rule]) -> str:
    """``1.00 (23 of 23)``, or how the rule fared where real code gave it no decided finding."""
    measured = rule.measured
    if measured is None:
        return "-"
    true, false, debatable = measured.realcode
    if measured.realcode_precision is None:
        return f"no finding decided ({debatable} debatable)" if debatable else "no finding"
    return f"{measured.realcode_precision:.2f} ({true} of {true + false})"
