"""Golden tests for the text format (``leaklint/report/text.py``)."""

from __future__ import annotations

import click
import pytest

from leaklint.findings import Confidence
from leaklint.report import FORMATS, ReportOptions, render
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


def text(*findings, errors=(), **options) -> str:
    return render("text", result(*findings, errors=errors), RULES, ReportOptions(**options))


def test_findings_with_help_and_plural_summary() -> None:
    assert text(*FINDINGS) == (
        "src/eval.py:3:9: LL401 [peak, medium confidence] 'model(batch)' runs with autograd enabled inside 'evaluate'\n"
        "    help: wrap the evaluation loop in `with torch.no_grad():`\n"
        "train.py:6:5: LL101 [leak, high confidence] 'loss' is accumulated into 'total_loss' with its autograd graph;"
        " every iteration's graph stays alive\n"
        "    help: accumulate loss.item() or loss.detach()\n"
        "train.py:7:20: LL102 [leak, high confidence] 'loss' is appended to 'history' with its autograd graph\n"
        "    help: append t.detach() (or t.item())\n"
        "Found 3 findings (2 leak, 1 peak) in 2 files\n"
    )


def test_singular_summary() -> None:
    assert text(APPEND_FINDING).splitlines()[-1] == "Found 1 finding (1 leak) in 1 file"


def test_summary_lists_severities_in_leak_peak_perf_order() -> None:
    perf = finding(LossAccumulation, "a.py", 1, 1, 2, "slow", severity="perf", confidence=Confidence.LOW)
    assert text(EVAL_FINDING, perf, ACCUMULATE_FINDING).splitlines()[-1] == (
        "Found 3 findings (1 leak, 1 peak, 1 perf) in 3 files"
    )


def test_no_findings() -> None:
    assert text() == "All checks passed!\n"


def test_no_files_does_not_claim_success() -> None:
    assert render("text", result(files_checked=0), RULES, ReportOptions()) == "No Python files found: nothing was checked\n"


def test_no_findings_but_errors_does_not_claim_success() -> None:
    assert text(errors=(SYNTAX_ERROR,)) == "No findings; 1 file could not be fully checked\n"
    assert text(APPEND_FINDING, errors=(SYNTAX_ERROR,)).splitlines()[-1] == (
        "Found 1 finding (1 leak) in 1 file; 1 file could not be fully checked"
    )


def test_quiet_prints_only_finding_lines() -> None:
    assert text(*FINDINGS, quiet=True, show_source=True, sources=SOURCES) == (
        "src/eval.py:3:9: LL401 [peak, medium confidence] 'model(batch)' runs with autograd enabled inside 'evaluate'\n"
        "train.py:6:5: LL101 [leak, high confidence] 'loss' is accumulated into 'total_loss' with its autograd graph;"
        " every iteration's graph stays alive\n"
        "train.py:7:20: LL102 [leak, high confidence] 'loss' is appended to 'history' with its autograd graph\n"
    )
    assert text(quiet=True) == ""


def test_show_source() -> None:
    # The eval.py line is tab-indented: the caret line repeats the tabs so the carets line up.
    assert text(*FINDINGS, show_source=True, sources=SOURCES) == (
        "src/eval.py:3:9: LL401 [peak, medium confidence] 'model(batch)' runs with autograd enabled inside 'evaluate'\n"
        "3 | \t\tout = model(batch)\n"
        "  | \t\t      ^^^^^^^^^^^^\n"
        "    help: wrap the evaluation loop in `with torch.no_grad():`\n"
        "\n"
        "train.py:6:5: LL101 [leak, high confidence] 'loss' is accumulated into 'total_loss' with its autograd graph;"
        " every iteration's graph stays alive\n"
        "6 |     total_loss += loss\n"
        "  |     ^^^^^^^^^^^^^^^^^^\n"
        "    help: accumulate loss.item() or loss.detach()\n"
        "\n"
        "train.py:7:20: LL102 [leak, high confidence] 'loss' is appended to 'history' with its autograd graph\n"
        "7 |     history.append(loss)\n"
        "  |                    ^^^^\n"
        "    help: append t.detach() (or t.item())\n"
        "\n"
        "Found 3 findings (2 leak, 1 peak) in 2 files\n"
    )


def test_show_source_skips_files_without_source() -> None:
    out = text(EVAL_FINDING, ACCUMULATE_FINDING, show_source=True, sources={"train.py": SOURCES["train.py"]})
    assert out.startswith(
        "src/eval.py:3:9: LL401 [peak, medium confidence] 'model(batch)' runs with autograd enabled inside 'evaluate'\n"
        "    help: wrap the evaluation loop in `with torch.no_grad():`\n"
        "\n"
        "train.py:6:5: LL101"
    )
    assert "6 |     total_loss += loss\n" in out


def test_show_source_multiline_finding_underlines_to_end_of_first_line() -> None:
    source = "x = 1\n" * 9 + "total = foo(a,\n            b)\n"
    multi = finding(LossAccumulation, "m.py", 10, 9, 14, "spans lines", end_line=11)
    assert text(multi, show_source=True, sources={"m.py": source}, quiet=False).splitlines()[1:3] == [
        "10 | total = foo(a,",
        "   |         ^^^^^^",
    ]


def test_show_source_wide_characters_and_crlf() -> None:
    source = "s = '日本' + loss\r\nnext\r\n"
    wide = finding(LossAccumulation, "w.py", 1, 12, 16, "wide")
    assert text(wide, show_source=True, sources={"w.py": source}).splitlines()[1:3] == [
        "1 | s = '日本' + loss",
        "  |" + " " * 14 + "^^^^",  # one separator space, then 13 cells: the CJK characters take two each
    ]


def test_color_only_adds_styling() -> None:
    plain = text(*FINDINGS, show_source=True, sources=SOURCES)
    colored = text(*FINDINGS, show_source=True, sources=SOURCES, color=True)
    assert colored != plain
    assert click.unstyle(colored) == plain
    assert click.style("LL101", fg="red", bold=True) in colored
    assert click.style("LL401", fg="yellow", bold=True) in colored


def test_dispatch_rejects_unknown_format() -> None:
    assert FORMATS == ("text", "full", "concise", "json", "json-lines", "junit", "gitlab", "github", "sarif")
    with pytest.raises(ValueError, match="unknown output format 'xml'"):
        render("xml", result(), RULES, ReportOptions())
