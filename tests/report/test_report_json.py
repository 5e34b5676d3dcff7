"""Golden tests for the JSON format (``leaklint/report/json.py``)."""

from __future__ import annotations

import json

from leaklint.report import ReportOptions, render
from report_fixtures import ACCUMULATE_FINDING, FINDINGS, RULES, SYNTAX_ERROR, result


def test_single_finding_golden() -> None:
    assert render("json", result(ACCUMULATE_FINDING), RULES, ReportOptions()) == """\
[
  {
    "path": "train.py",
    "line": 6,
    "column": 5,
    "end_line": 6,
    "end_column": 23,
    "code": "LL101",
    "name": "loss-accumulation",
    "severity": "leak",
    "confidence": "high",
    "message": "'loss' is accumulated into 'total_loss' with its autograd graph; every iteration's graph stays alive",
    "help": "accumulate loss.item() or loss.detach()",
    "fix": null,
    "runtime": null
  }
]
"""


def test_keeps_engine_order_and_key_order() -> None:
    data = json.loads(render("json", result(*FINDINGS), RULES, ReportOptions()))
    assert [(d["path"], d["line"], d["code"]) for d in data] == [
        ("src/eval.py", 3, "LL401"),
        ("train.py", 6, "LL101"),
        ("train.py", 7, "LL102"),
    ]
    assert list(data[0]) == [
        "path", "line", "column", "end_line", "end_column", "code", "name",
        "severity", "confidence", "message", "help", "fix", "runtime",
    ]  # fmt: skip
    assert data[0]["confidence"] == "medium"


def test_empty() -> None:
    assert render("json", result(errors=(SYNTAX_ERROR,)), RULES, ReportOptions()) == "[]\n"


def test_runtime_names_the_command_that_measures_the_rules_repro() -> None:
    from leaklint.registry import all_rules

    data = json.loads(render("json", result(*FINDINGS), all_rules(), ReportOptions()))
    assert {d["code"]: d["runtime"] for d in data} == {
        "LL401": "leaklint verify LL401", "LL101": "leaklint verify LL101", "LL102": "leaklint verify LL102",
    }
    assert [d["severity"] for d in data] == ["peak", "leak", "leak"]
