"""The baseline: --write-baseline records today's findings, --baseline (or the config key) reports
only new ones, matched by rule, file and the code around them, never by line number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import LEAKY_LOOP, ROOT, run_leaklint, text

SECOND_LEAK = """

def train_more(model, loader, optimizer, criterion):
    kept = []
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        kept.append(loss)
    return kept
"""


def write_baseline(project: Path, *paths: str, name: str = "leaklint-baseline.json") -> Path:
    result = run_leaklint("--write-baseline", name, *(paths or (".",)), cwd=project)
    assert result.returncode == 0, text(result)
    return project / name


def test_a_baseline_hides_the_findings_it_records_and_the_run_passes(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    baseline = write_baseline(project)
    entries = json.loads(baseline.read_text())["findings"]
    assert [(e["code"], e["path"], e["line"]) for e in entries] == [("LL101", "train.py", 10)]

    result = run_leaklint("--baseline", "leaklint-baseline.json", cwd=project)
    out, err = text(result)
    assert result.returncode == 0, out + err
    assert out.strip() == "No new findings; 1 more finding recorded in the baseline"
    assert err == ""


def test_a_new_leak_is_the_only_finding_and_edits_above_do_not_bring_recorded_ones_back(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    write_baseline(project)
    (project / "train.py").write_text("import os\n\n\n" + LEAKY_LOOP + SECOND_LEAK)  # every line moved down

    result = run_leaklint("--baseline", "leaklint-baseline.json", "--format", "json", cwd=project)
    findings = json.loads(result.stdout)
    assert result.returncode == 1
    assert [(f["code"], f["line"]) for f in findings] == [("LL102", 22)]


def test_stale_entries_are_reported_so_the_file_can_shrink(project):
    (project / "train.py").write_text(LEAKY_LOOP + SECOND_LEAK)
    write_baseline(project)
    (project / "train.py").write_text(LEAKY_LOOP.replace("total_loss += loss", "total_loss += loss.item()") + SECOND_LEAK)

    result = run_leaklint("--baseline", "leaklint-baseline.json", cwd=project)
    out, err = text(result)
    assert result.returncode == 0, out + err
    assert "1 entry of the baseline leaklint-baseline.json matches no finding any more" in err
    assert "--write-baseline leaklint-baseline.json" in err


def test_repeated_lines_are_told_apart_by_occurrence(project):
    body = LEAKY_LOOP.replace("def train(", "def train_a(") + LEAKY_LOOP.replace("import torch\n", "").replace("def train(", "def train_b(")
    (project / "train.py").write_text(body)
    write_baseline(project)
    (project / "train.py").write_text(body + LEAKY_LOOP.replace("import torch\n", "").replace("def train(", "def train_c("))

    result = run_leaklint("--baseline", "leaklint-baseline.json", "--format", "json", cwd=project)
    findings = json.loads(result.stdout)
    assert len(findings) == 1 and findings[0]["code"] == "LL101"


def test_the_config_key_names_the_baseline_relative_to_the_config_file(project):
    (project / "src").mkdir()
    (project / "src" / "train.py").write_text(LEAKY_LOOP)
    (project / "pyproject.toml").write_text('[tool.leaklint]\nbaseline = "ci/leaklint-baseline.json"\n')
    (project / "ci").mkdir()
    write_baseline(project, "src", name="ci/leaklint-baseline.json")
    entries = json.loads((project / "ci" / "leaklint-baseline.json").read_text())["findings"]
    assert entries[0]["path"] == "../src/train.py"

    result = run_leaklint("train.py", cwd=project / "src")  # another working directory: same match
    assert result.returncode == 0, text(result)


def test_sarif_marks_results_new_or_unchanged_and_suppresses_the_recorded_ones(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    write_baseline(project)
    (project / "train.py").write_text(LEAKY_LOOP + SECOND_LEAK)

    result = run_leaklint("--baseline", "leaklint-baseline.json", "--format", "sarif", cwd=project)
    results = json.loads(result.stdout)["runs"][0]["results"]
    assert [(r["ruleId"], r["baselineState"], "suppressions" in r) for r in results] == [
        ("LL101", "unchanged", True),
        ("LL102", "new", False),
    ]
    assert all(r["partialFingerprints"]["leaklint/v1"] for r in results)
    assert result.returncode == 1  # only the new one counts

    without = json.loads(run_leaklint("--format", "sarif", cwd=project).stdout)["runs"][0]["results"]
    assert [r["partialFingerprints"] for r in without] == [r["partialFingerprints"] for r in results]


def test_sarif_with_a_baseline_is_valid_against_the_schema(project):
    jsonschema = pytest.importorskip("jsonschema")
    schema_path = ROOT.parent / "shared/data/sarif-schema-2.1.0.json"
    if not schema_path.exists():
        pytest.skip(f"SARIF schema not found at {schema_path}")
    (project / "train.py").write_text(LEAKY_LOOP)
    write_baseline(project)
    (project / "train.py").write_text(LEAKY_LOOP + SECOND_LEAK)
    log = json.loads(run_leaklint("--baseline", "leaklint-baseline.json", "--format", "sarif", cwd=project).stdout)
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    assert not list(validator.iter_errors(log))


@pytest.mark.parametrize(
    "content, reason",
    [
        (None, "baseline file not found (write one with --write-baseline"),
        ("{not json", "not a leaklint baseline: invalid JSON"),
        ('{"tool": "ruff", "findings": []}', "not a leaklint baseline (expected a JSON object"),
        ('{"tool": "leaklint", "version": 99, "findings": []}', "baseline format version 99 is not 1"),
        ('{"tool": "leaklint", "version": 1, "findings": [{"code": "LL101"}]}', "entry 1 lacks a code, a path or a fingerprint"),
    ],
)
def test_a_bad_baseline_is_one_line_on_stderr_and_exit_2(project, content, reason):
    (project / "train.py").write_text(LEAKY_LOOP)
    if content is not None:
        (project / "base.json").write_text(content)
    result = run_leaklint("--baseline", "base.json", cwd=project)
    out, err = text(result)
    assert result.returncode == 2
    assert err.count("\n") == 1 and "base.json" in err and reason in err, err
    assert "Traceback" not in out + err


def test_a_baseline_that_cannot_be_written_is_one_line_and_exit_2(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("--write-baseline", "missing/base.json", "train.py", cwd=project)
    out, err = text(result)
    assert result.returncode == 2
    assert err.count("\n") == 1 and "missing/base.json: cannot write the baseline" in err, err
    assert not (project / "missing").exists()


def test_writing_a_baseline_never_leaves_a_half_written_file(tmp_path, monkeypatch):
    from leaklint import baseline

    target = tmp_path / "base.json"
    target.write_text("previous\n")

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    import leaklint.cache

    monkeypatch.setattr(leaklint.cache.os, "replace", fail)
    with pytest.raises(baseline.BaselineError, match="No space left on device"):
        baseline.write(target, [], {})
    assert target.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["base.json"]


def test_write_baseline_refuses_fix(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("--write-baseline", "b.json", "--fix", "train.py", cwd=project)
    assert result.returncode == 2
    assert "cannot be combined with --fix" in text(result)[1]
