"""Golden tests for GitHub Actions workflow commands (``leaklint/report/github.py``)."""

from __future__ import annotations

from leaklint.findings import ErrorKind, FileError
from leaklint.report import ReportOptions, render
from report_fixtures import FINDINGS, RULES, SYNTAX_ERROR, LossAccumulation, finding, result


def github(*findings, errors=()) -> str:
    return render("github", result(*findings, errors=errors), RULES, ReportOptions())


def test_findings_then_errors() -> None:
    assert github(*FINDINGS, errors=(SYNTAX_ERROR,)) == (
        "::warning file=src/eval.py,line=3,col=9,endLine=3,endColumn=21,title=LL401 eval-without-no-grad"
        "::'model(batch)' runs with autograd enabled inside 'evaluate'\n"
        "::warning file=train.py,line=6,col=5,endLine=6,endColumn=23,title=LL101 loss-accumulation"
        "::'loss' is accumulated into 'total_loss' with its autograd graph; every iteration's graph stays alive\n"
        "::warning file=train.py,line=7,col=20,endLine=7,endColumn=24,title=LL102 history-append"
        "::'loss' is appended to 'history' with its autograd graph\n"
        "::error file=broken.py,title=leaklint syntax-error::syntax error at 3:7: expected ':'\n"
    )


def test_escaping() -> None:
    odd = finding(
        LossAccumulation,
        "dir,with:odd%/a b.py",
        1,
        1,
        5,
        "100% of x, y: leaked\r\nsecond line",
    )
    # Data escapes only %, CR and LF; property values also escape ':' and ','.
    assert github(odd) == (
        "::warning file=dir%2Cwith%3Aodd%25/a b.py,line=1,col=1,endLine=1,endColumn=5,"
        "title=LL101 loss-accumulation::100%25 of x, y: leaked%0D%0Asecond line\n"
    )


def test_error_names_the_rule() -> None:
    error = FileError(path="a.py", kind=ErrorKind.INTERNAL, reason="crashed: 50%", rule="LL102")
    assert github(errors=(error,)) == "::error file=a.py,title=leaklint internal-error::crashed: 50%25 (rule LL102)\n"


def test_empty() -> None:
    assert github() == ""
