"""The real-leak benchmark (bench/leaks): its cases stay well-formed and its scorer counts right.

These tests never run leaklint over the benchmark (bench/leaks/score.py does, outside the test
suite); they check the case files, the README tables and the scoring arithmetic.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT

LEAKS = ROOT / "bench" / "leaks"


def _load(filename: str, module_name: str):
    """Import a bench script by path (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location(module_name, LEAKS / filename)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


leakcases = _load("leakcases.py", "leakcases")
score = _load("score.py", "bench_leaks_score")

HEADER = '''"""{title}

Source: https://github.com/example/project/issues/1
Style: plain
Kind: {kind}
"""
import torch
'''


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_every_benchmark_file_is_well_formed():
    items, problems = leakcases.load_all(LEAKS)
    assert problems == []
    assert {item.role for item in items} == {"buggy", "fixed", "negative"}


def test_every_case_cites_a_report_and_every_negative_says_what_it_resembles():
    items, _ = leakcases.load_all(LEAKS)
    for item in items:
        assert item.sources, item.path
        if item.role == "negative":
            assert item.kind.startswith("negative:"), item.path


def test_readme_tables_match_the_cases():
    items, _ = leakcases.load_all(LEAKS)
    readme = (LEAKS / "README.md").read_text()
    assert f"{score.INVENTORY_START}\n{score.inventory(items)}\n{score.INVENTORY_END}" in readme, (
        "bench/leaks/README.md is out of date: run python bench/leaks/score.py --update-readme"
    )


def test_malformed_cases_are_listed_and_nothing_is_scored(tmp_path):
    write(tmp_path, "cases/plain_no_marker/buggy.py", HEADER.format(title="t", kind="k") + "x = torch.zeros(1)\n")
    write(tmp_path, "cases/plain_marker_in_fix/buggy.py", HEADER.format(title="t", kind="k") + "x = 1  # leak: LL101\n")
    write(tmp_path, "cases/plain_marker_in_fix/fixed.py", HEADER.format(title="t", kind="k") + "x = 1  # leak: LL101\n")
    write(tmp_path, "negatives/plain_no_header.py", "import torch\n")
    done = subprocess.run([sys.executable, str(LEAKS / "score.py"), "--root", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2
    assert "without any '# leak:' marker" in done.stderr
    assert "must not carry leak markers" in done.stderr
    assert "header" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("marker", ["# leak LL101", "# leak: LL1", "# leak: new:Bad_Family"])
def test_a_misspelt_marker_is_a_problem_not_a_silent_miss(tmp_path, marker):
    path = write(tmp_path, "cases/plain_typo/buggy.py", HEADER.format(title="t", kind="k") + f"x = 1  {marker}\n")
    _, problems = leakcases.load(path)
    assert any("marker" in problem for problem in problems)


def test_recall_counts_marked_lines_and_precision_counts_findings(tmp_path):
    buggy = write(tmp_path, "cases/plain_two_marks/buggy.py", HEADER.format(title="t", kind="k") + (
        "a = 1  # leak: LL101\n"
        "b = 2  # leak: new:metric-never-reset\n"
        "c = 3\n"
    ))
    fixed = write(tmp_path, "cases/plain_two_marks/fixed.py", HEADER.format(title="t", kind="k") + "a = 1\nb = 2\nc = 3\n")
    negative = write(tmp_path, "negatives/plain_near_miss.py", HEADER.format(title="t", kind="negative: k") + "d = 4\n")
    items, problems = leakcases.load_all(tmp_path)
    assert problems == []
    first_mark = 8  # the header takes 7 lines
    findings = [
        score.Finding(buggy, first_mark, "LL102", "high", ""),        # on a marked line, another rule: found
        score.Finding(buggy, first_mark + 2, "LL101", "high", ""),    # unmarked line of a buggy file
        score.Finding(fixed, first_mark, "LL101", "medium", ""),      # any finding in a fixed file
        score.Finding(negative, first_mark, "LL201", "high", ""),     # any finding in a negative
    ]
    result = score.score(items, findings)
    assert (result.recall.hits, result.recall.total) == (1, 2)
    assert (result.recall_by_code["LL101"].hits, result.recall_by_code["new:metric-never-reset"].hits) == (1, 0)
    assert (result.expected_rule.hits, result.expected_rule.total) == (0, 1)
    assert (result.precision.hits, result.precision.total) == (1, 4)
    assert (result.precision_by_rule["LL102"].hits, result.precision_by_rule["LL101"].total) == (1, 2)
    assert result.fixed_with_findings == {fixed: 1}
    assert [(miss[1], miss[2]) for miss in result.misses] == [(first_mark + 1, "new:metric-never-reset")]
    assert len(result.false_positives) == 3
