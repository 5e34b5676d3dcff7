"""What a new user meets first (issue 19), through the real command line.

Each case was a crash or a silent wrong answer: a report that could not be written for a file name
that is not UTF-8, a traceback for a closed standard input, selectors and config files that quietly
checked nothing, a cache that served a corrupted entry, a run that found no file and called itself
clean. Every one now gives a valid report, or a one-line message and a distinct exit status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CLEAN_LOOP, LEAKY_LOOP, ROOT, run_leaklint, text

SARIF_SCHEMA = ROOT.parent / "shared" / "data" / "sarif-schema-2.1.0.json"
NOT_UTF8 = b"tr\xffain.py"  # 0xff never occurs in UTF-8


def one_error_line(result: subprocess.CompletedProcess) -> str:
    """The run's whole stderr, which must be one ``leaklint: error:`` line and no traceback."""
    err = text(result)[1]
    assert err.count("\n") == 1 and err.startswith("leaklint: error: "), err
    return err.rstrip("\n")


# --- file names that are not UTF-8 ---------------------------------------------------------------
@pytest.fixture
def undecodable_name(project: Path) -> Path:
    """A leaky file whose name is the bytes ``tr\\xffain.py``."""
    try:
        with open(os.path.join(os.fsencode(project), NOT_UTF8), "wb") as handle:
            handle.write(LEAKY_LOOP.encode())
    except OSError as error:  # a file system that only stores UTF-8 names (APFS)
        pytest.skip(f"cannot create a file named {NOT_UTF8!r}: {error}")
    return project


def sarif_validator():  # type: ignore[no-untyped-def]
    jsonschema = pytest.importorskip("jsonschema")
    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"SARIF schema not found at {SARIF_SCHEMA}")
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.validators.validator_for(schema)(schema)


@pytest.mark.parametrize("output_format", ["text", "json", "github", "sarif"])
@pytest.mark.parametrize("destination", ["stdout", "output-file"])
def test_every_format_reports_a_file_name_that_is_not_utf8(undecodable_name, output_format, destination):
    target = ["--output-file", "report.out"] if destination == "output-file" else []
    result = run_leaklint("--format", output_format, "--exit-zero", *target, ".", cwd=undecodable_name)
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    report = (undecodable_name / "report.out").read_bytes() if target else result.stdout
    shown = report.decode("utf-8")  # strict: the report is valid UTF-8
    if output_format == "text":
        assert shown.startswith("tr\ufffdain.py:10:9: LL101 ")
    elif output_format == "github":
        assert shown.startswith("::warning file=tr\ufffdain.py,line=10,")
    elif output_format == "json":
        [finding] = json.loads(shown)
        assert finding["path"] == "tr\ufffdain.py" and finding["line"] == 10
        assert "\\udcff" not in shown  # no lone surrogate that strict JSON parsers reject
    else:
        log = json.loads(shown)
        sarif_validator().validate(log)
        [found] = log["runs"][0]["results"]
        # The URI keeps the file's real bytes, so it still names the file.
        assert found["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "tr%FFain.py"


def test_without_exit_zero_the_finding_still_exits_1(undecodable_name):
    result = run_leaklint("--format", "sarif", ".", cwd=undecodable_name)
    assert result.returncode == 1 and result.stderr == b""


def test_a_terminal_that_cannot_show_the_replacement_character_gets_a_question_mark(undecodable_name):
    result = run_leaklint(".", cwd=undecodable_name, env={"PYTHONIOENCODING": "latin-1"})
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith(b"tr?ain.py:10:9: LL101 ")


def test_fix_and_diff_name_the_file_the_same_way(undecodable_name):
    diff = run_leaklint("--diff", ".", cwd=undecodable_name)
    assert diff.returncode == 1 and diff.stdout.decode().startswith("--- a/tr\ufffdain.py\n+++ b/tr\ufffdain.py\n")
    fixed = run_leaklint("--fix", "--show-fixes", ".", cwd=undecodable_name)
    assert fixed.returncode == 0, fixed.stderr
    assert "tr\ufffdain.py:10:9: LL101 Detach 'loss' (safe)" in fixed.stdout.decode()


# --- standard input --------------------------------------------------------------------------------
def run_with_stdin_closed(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``leaklint ARGS <&-``: the command starts with file descriptor 0 closed."""
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "leaklint", *args], cwd=cwd, env=env, capture_output=True, timeout=300,
        stdin=subprocess.DEVNULL, preexec_fn=lambda: os.close(0),
    )


@pytest.mark.parametrize("mode", [[], ["--fix"], ["--diff"]])
def test_a_closed_standard_input_is_a_one_line_error(project, mode):
    result = run_with_stdin_closed(*mode, "-", cwd=project)
    assert result.returncode == 2
    assert b"Traceback" not in result.stderr
    assert "-: error: cannot read standard input: it is closed\n" in result.stderr.decode()
