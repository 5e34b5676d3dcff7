"""The runnable leak benchmark (bench/runnable): its cases stay well-formed and its scorer judges
"the right line" as its README says.

These tests never run a case (bench/runnable/score.py does, outside the test suite); they check
the case files and the scorer's reading of a hand-made ``leaklint.run/1`` document.
"""

from __future__ import annotations

import importlib.util
import sys

from conftest import ROOT

RUNNABLE = ROOT / "bench" / "runnable"


def _load():
    spec = importlib.util.spec_from_file_location("bench_runnable_score", RUNNABLE / "score.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_runnable_score"] = module
    spec.loader.exec_module(module)
    return module


score = _load()

SCRIPT = "/proj/bench/runnable/cases/plain_x/buggy.py"


def document(findings=(), sites=(), unexplained=(), grows=True):
    return {
        "schema": "leaklint.run/1", "script": SCRIPT, "grows": grows,
        "tensor": {"growth_per_step": 8192.0}, "host": {"growth_per_step": 0.0},
        "sites": list(sites), "findings": list(findings), "unexplained": list(unexplained),
    }


def finding(line, status, path=SCRIPT, code="LL101"):
    return {"path": path, "line": line, "column": 5, "code": code, "status": status, "evidence": ""}


def test_a_confirmed_finding_at_the_marked_line_names_it():
    verdict = score.judge(document(findings=[finding(40, "confirmed")]), SCRIPT, [40])
    assert verdict["right_line"] and verdict["grows"] and verdict["confirmed"] == ["40:LL101"]


def test_a_finding_not_observed_or_in_another_file_does_not_name_the_line():
    doc = document(findings=[finding(40, "not observed"), finding(41, "confirmed", path="/proj/other.py")])
    verdict = score.judge(doc, SCRIPT, [40, 41])
    assert not verdict["right_line"] and verdict["named"] == []


def test_a_growing_site_or_unexplained_entry_at_the_marked_line_names_it():
    relative = "bench/runnable/cases/plain_x/buggy.py"
    doc = document(sites=[{"where": f"{relative}:12", "bytes_per_step": 8192.0}],
                   unexplained=[{"where": f"{relative}:30", "bytes_per_step": 8192.0}, {"where": "host memory", "bytes_per_step": 2048.0}])
    assert score.named_lines(doc, SCRIPT, cwd="/proj") == {12, 30}
    assert score.judge(doc, SCRIPT, [30], cwd="/proj")["right_line"]
    assert not score.judge(doc, SCRIPT, [31], cwd="/proj")["right_line"]


def test_the_summary_counts_each_outcome():
    def result(case, grows, right, fixed_confirmed=(), fixed_grows=False, error=None):
        return {"case": case, "buggy_right_line": right,
                "buggy": {"error": error, "grows": grows}, "fixed": {"error": None, "grows": fixed_grows, "confirmed": list(fixed_confirmed)}}
    summary = score.summarize([
        result("a", True, True), result("b", True, False), result("c", False, False, fixed_grows=True),
        result("d", True, True, fixed_confirmed=["3:LL101"]), result("e", False, False, error="timed out"),
    ])
    assert summary["buggy_right_line"] == ["a", "d"] and summary["buggy_wrong_line"] == ["b"]
    assert summary["buggy_flat"] == ["c"] and summary["fixed_confirmed"] == ["d"] and summary["fixed_grew"] == ["c"]
    assert summary["errors"] == ["e/buggy"]


def test_run_options_come_from_the_docstring(tmp_path):
    path = tmp_path / "buggy.py"
    path.write_text('"""Title\n\nStyle: plain\nRun: --step __main__:Net.forward\n"""\nimport torch\n')
    assert score.run_options(path) == ["--step", "__main__:Net.forward"]
    path.write_text('"""Title\n\nStyle: plain\n"""\n')
    assert score.run_options(path) == []


def test_every_case_is_a_well_formed_pair_rebuilt_from_a_leak_case():
    cases, problems = score.discover(RUNNABLE, None)
    assert problems == []
    assert len(cases) >= 30
    for case, buggy, fixed, markers in cases:
        assert markers, f"{case}: buggy.py has no '# leak:' marker"
        assert "# leak:" not in fixed.read_text(), f"{case}: fixed.py carries a marker"
        assert (ROOT / "bench" / "leaks" / "cases" / case / "buggy.py").is_file(), f"{case}: no bench/leaks case of that name"
        for path in (buggy, fixed):
            assert f"Runnable from: bench/leaks/cases/{case}" in path.read_text(), path


def test_the_document_is_found_after_the_scripts_own_prints():
    import json

    text = "epoch 0 loss 1.0\n{not json\n" + json.dumps(document(), indent=2) + "\n"
    assert score.parse_document(text)["schema"] == "leaklint.run/1"
