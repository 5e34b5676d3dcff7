"""Tests for the SARIF 2.1.0 format (``leaklint/report/sarif.py``).

The output is validated against the official OASIS schema, read from the shared data directory next
to the project (never copied into the repository); the test skips when it is not there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT

from leaklint.findings import ErrorKind, FileError
from leaklint.report import ReportOptions, render
from report_fixtures import (
    ACCUMULATE_FINDING,
    APPEND_FINDING,
    EVAL_FINDING,
    FINDINGS,
    RULES,
    SOURCES,
    SYNTAX_ERROR,
    LossAccumulation,
    finding,
    result,
)

SCHEMA_PATH = ROOT.parent / "shared/data/sarif-schema-2.1.0.json"


def sarif(*findings, errors=(), **options) -> dict[str, Any]:
    out = render("sarif", result(*findings, errors=errors), RULES, ReportOptions(**options))
    assert out.endswith("}\n")
    return json.loads(out)


def fingerprints(log: dict[str, Any]) -> list[str]:
    return [r["partialFingerprints"]["leaklint/v1"] for r in log["runs"][0]["results"]]


@pytest.fixture(scope="module")
def validator() -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    try:
        schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    except OSError as exc:
        pytest.skip(f"SARIF schema not found at {SCHEMA_PATH}: {exc}")
    cls = jsonschema.validators.validator_for(schema)  # the draft the schema declares (draft-04)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"sources": SOURCES, "src_root": "/work/my project"},
        {"sources": SOURCES, "tool_version": "9.9.9"},
    ],
)
def test_valid_against_official_schema(validator: Any, options: dict[str, Any]) -> None:
    absolute = finding(LossAccumulation, "/abs/dir with space/x.py", 2, 1, 3, "absolute")
    errors = (SYNTAX_ERROR, FileError("train.py", ErrorKind.INTERNAL, "boom", rule="LL102"))
    for log in (sarif(), sarif(*FINDINGS, absolute, errors=errors, **options)):
        problems = sorted(validator.iter_errors(log), key=str)
        assert not problems, "\n".join(f"{list(p.absolute_path)}: {p.message}" for p in problems)


def test_run_header_and_rules() -> None:
    log = sarif(tool_version="1.2.3")
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("leaklint", "1.2.3")
    assert driver["informationUri"] == "https://github.com/leaklint/leaklint"
    # Every rule is listed, fired or not, in the mapping's order.
    assert [r["id"] for r in driver["rules"]] == ["LL101", "LL102", "LL401"]
    ll401 = driver["rules"][2]
    assert ll401["name"] == "eval-without-no-grad"
    assert ll401["shortDescription"] == ll401["fullDescription"] == {"text": RULES["LL401"].summary}
    assert ll401["help"] == {"text": RULES["LL401"].docs, "markdown": RULES["LL401"].docs}
    assert ll401["defaultConfiguration"] == {"level": "warning", "enabled": False}
    assert ll401["properties"] == {"severity": "peak", "tags": ["pytorch", "memory", "peak"]}
    assert run["results"] == []
    assert run["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": []}]
    assert "uri" not in run["originalUriBaseIds"]["%SRCROOT%"]


def test_result_golden() -> None:
    (result_,) = sarif(ACCUMULATE_FINDING)["runs"][0]["results"]
    fingerprint = result_.pop("partialFingerprints")["leaklint/v1"]
    assert len(fingerprint) == 64 and int(fingerprint, 16) >= 0
    assert result_ == {
        "ruleId": "LL101",
        "ruleIndex": 0,
        "level": "warning",
        "message": {
            "text": "'loss' is accumulated into 'total_loss' with its autograd graph; every iteration's graph"
            " stays alive Help: accumulate loss.item() or loss.detach()"
        },
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": "train.py", "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": 6, "startColumn": 5, "endLine": 6, "endColumn": 23},
                }
            }
        ],
        "properties": {"confidence": "high", "severity": "leak"},
    }


def test_rule_index_points_at_the_rule() -> None:
    log = sarif(*FINDINGS)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    results = log["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["LL401", "LL101", "LL102"]  # engine order kept
    assert [r["ruleIndex"] for r in results] == [2, 0, 1]
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]


def test_perf_is_a_note_and_unknown_rule_has_no_index() -> None:
    perf = finding(LossAccumulation, "a.py", 1, 1, 2, "slow", severity="perf", code="XX999")
    (r,) = sarif(perf)["runs"][0]["results"]
    assert r["level"] == "note"
    assert r["ruleId"] == "XX999" and "ruleIndex" not in r


def test_uris() -> None:
    odd = finding(LossAccumulation, "./dir/a b#1.py", 1, 1, 2, "relative")
    absolute = finding(LossAccumulation, "/abs/dir/ü.py", 1, 1, 2, "absolute")
    log = sarif(odd, absolute, src_root="/work/my project")
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in log["runs"][0]["results"]]
    assert locations == [
        {"uri": "dir/a%20b%231.py", "uriBaseId": "%SRCROOT%"},
        {"uri": "file:///abs/dir/%C3%BC.py"},
    ]
    assert log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file:///work/my%20project/"


def test_errors_become_notifications() -> None:
    internal = FileError("train.py", ErrorKind.INTERNAL, "boom", rule="LL102")
    (invocation,) = sarif(ACCUMULATE_FINDING, errors=(SYNTAX_ERROR, internal))["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"] == [
        {
            "level": "error",
            "message": {"text": "syntax error at 3:7: expected ':'"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": "broken.py", "uriBaseId": "%SRCROOT%"}}}],
            "descriptor": {"id": "syntax-error"},
        },
        {
            "level": "error",
            "message": {"text": "boom"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": "train.py", "uriBaseId": "%SRCROOT%"}}}],
            "descriptor": {"id": "internal-error"},
            "associatedRule": {"id": "LL102", "index": 1},
        },
    ]


def shifted(finding_, by: int):
    from dataclasses import replace

    return replace(finding_, line=finding_.line + by, end_line=finding_.end_line + by)


def test_fingerprints_stable_when_lines_inserted_above() -> None:
    before = fingerprints(sarif(*FINDINGS, sources=SOURCES))
    edited = {
        "train.py": "# a new comment\nimport os\n" + SOURCES["train.py"],
        "src/eval.py": '"""Docstring."""\n' + SOURCES["src/eval.py"],
    }
    moved = (shifted(EVAL_FINDING, 1), shifted(ACCUMULATE_FINDING, 2), shifted(APPEND_FINDING, 2))
    assert fingerprints(sarif(*moved, sources=edited)) == before
    assert len(set(before)) == 3


def test_fingerprints_distinguish_repeated_lines_by_occurrence() -> None:
    source = "for b in data:\n    total += loss\nfor b in data:\n    total += loss\n"
    first = finding(LossAccumulation, "r.py", 2, 5, 18, "again")
    second = finding(LossAccumulation, "r.py", 4, 5, 18, "again")
    prints = fingerprints(sarif(first, second, sources={"r.py": source}))
    assert len(set(prints)) == 2
    # Inserting a line above both keeps both.
    moved = fingerprints(sarif(shifted(first, 1), shifted(second, 1), sources={"r.py": "\n" + source}))
    assert moved == prints


def test_fingerprints_fall_back_to_line_number_without_source() -> None:
    assert fingerprints(sarif(ACCUMULATE_FINDING)) != fingerprints(sarif(shifted(ACCUMULATE_FINDING, 1)))
    assert fingerprints(sarif(ACCUMULATE_FINDING)) == fingerprints(sarif(ACCUMULATE_FINDING))


def test_the_cli_sarif_for_the_fixtures_is_valid(validator: Any) -> None:
    """End to end: what `leaklint --format sarif fixtures/` prints is a valid SARIF 2.1.0 log."""
    from conftest import run_leaklint

    completed = run_leaklint("--format", "sarif", "--select", "ALL", "fixtures", cwd=ROOT)
    assert completed.returncode == 1, completed.stderr
    log = json.loads(completed.stdout)
    problems = sorted(validator.iter_errors(log), key=str)
    assert not problems, "\n".join(f"{list(p.absolute_path)}: {p.message}" for p in problems)
    run = log["runs"][0]
    rule_ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert {"LL101", "LL102", "LL201", "LL401"} <= set(rule_ids)
    for sarif_result in run["results"]:
        assert rule_ids[sarif_result["ruleIndex"]] == sarif_result["ruleId"]
        assert sarif_result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("fixtures/")


def test_rules_and_results_carry_severity_and_the_runtime_repro_command() -> None:
    from leaklint.registry import all_rules

    known = all_rules()
    run = json.loads(render("sarif", result(*FINDINGS), known, ReportOptions()))["runs"][0]
    descriptors = {rule["id"]: rule["properties"] for rule in run["tool"]["driver"]["rules"]}
    assert descriptors["LL101"]["runtime"] == "leaklint verify LL101"
    assert descriptors["LL107"]["severity"] == "peak"
    assert [(r["ruleId"], r["properties"]["severity"], r["properties"]["runtime"]) for r in run["results"]] == [
        ("LL401", "peak", "leaklint verify LL401"),
        ("LL101", "leak", "leaklint verify LL101"),
        ("LL102", "leak", "leaklint verify LL102"),
    ]


def test_a_rule_without_a_repro_has_no_runtime_property() -> None:
    run = json.loads(render("sarif", result(*FINDINGS), RULES, ReportOptions()))["runs"][0]
    assert all("runtime" not in rule["properties"] for rule in run["tool"]["driver"]["rules"])
