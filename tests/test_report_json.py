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
    "fix": null
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
        "severity", "confidence", "message", "help", "fix",
    ]  # fmt: skip
    assert data[0]["confidence"] == "medium"


def test_empty() -> None:
    assert render("json", result(errors=(SYNTAX_ERROR,)), RULES, ReportOptions()) == "[]\n"
