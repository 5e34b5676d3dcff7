"""Ruff's everyday options, with Ruff's names: output formats, --statistics, colour, exclusion and
per-file ignores on the command line, --exit-non-zero-on-fix, --watch."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from xml.etree import ElementTree

import pytest

from conftest import CLEAN_LOOP, LEAKY_LOOP, run_leaklint, text

HEADLINE = "train.py:10:9: LL101 [leak, high confidence] 'loss' is accumulated into 'total_loss' with its autograd graph; every iteration's graph stays alive"


@pytest.fixture
def leaky(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    return project


# --- output formats ---------------------------------------------------------------------------
def test_output_format_is_rufs_name_and_format_stays_an_alias(leaky):
    by_ruff_name = run_leaklint("--output-format", "json", "train.py", cwd=leaky)
    by_old_name = run_leaklint("--format", "json", "train.py", cwd=leaky)
    assert json.loads(by_ruff_name.stdout) == json.loads(by_old_name.stdout)
    assert json.loads(by_ruff_name.stdout)[0]["code"] == "LL101"


def test_concise_prints_one_line_per_finding_and_the_summary(leaky):
    out, _ = text(run_leaklint("--output-format", "concise", "train.py", cwd=leaky))
    assert out.splitlines() == [HEADLINE, "Found 1 finding (1 leak) in 1 file; 1 fixable with --fix"]


def test_full_shows_the_source_line_under_each_finding(leaky):
    out, _ = text(run_leaklint("--output-format", "full", "train.py", cwd=leaky))
    assert out.splitlines()[0] == HEADLINE
    assert "total_loss += loss" in out and "^" in out


def test_json_lines_is_one_object_per_line(project):
    (project / "train.py").write_text(LEAKY_LOOP + LEAKY_LOOP.replace("import torch\n", "").replace("def train(", "def train_again("))
    out, _ = text(run_leaklint("--output-format", "json-lines", "train.py", cwd=project))
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(row["code"], row["line"]) for row in rows] == [("LL101", 10), ("LL101", 20)]


def test_junit_is_a_test_report_with_one_failure_per_finding(leaky):
    root = ElementTree.fromstring(run_leaklint("--output-format", "junit", "train.py", cwd=leaky).stdout)
    assert root.tag == "testsuites" and root.get("failures") == "1"
    case = root.find("testsuite/testcase")
    assert case is not None and case.get("name") == "leaklint.LL101" and case.get("classname") == "train.py"
    failure = case.find("failure")
    assert failure is not None and failure.text and failure.text.startswith("line 10, col 9, LL101 ")


def test_junit_without_findings_is_one_passing_case(project):
    (project / "train.py").write_text(CLEAN_LOOP)
    root = ElementTree.fromstring(run_leaklint("--output-format", "junit", "train.py", cwd=project).stdout)
    assert root.get("failures") == "0" and root.find("testsuite/testcase/failure") is None


def test_gitlab_code_quality_paths_are_relative_to_the_project_and_fingerprints_are_stable(project):
    (project / "src").mkdir()
    (project / "src" / "train.py").write_text(LEAKY_LOOP)
    first = json.loads(run_leaklint("--output-format", "gitlab", "train.py", cwd=project / "src", env={"CI_PROJECT_DIR": str(project)}).stdout)
    assert first[0]["location"] == {"path": "src/train.py", "lines": {"begin": 10, "end": 10}}
    assert first[0]["check_name"] == "LL101" and first[0]["severity"] == "major"
    (project / "src" / "train.py").write_text("import os\n" + LEAKY_LOOP)
    moved = json.loads(run_leaklint("--output-format", "gitlab", "train.py", cwd=project / "src", env={"CI_PROJECT_DIR": str(project)}).stdout)
    assert moved[0]["location"]["lines"]["begin"] == 11
    assert moved[0]["fingerprint"] == first[0]["fingerprint"]


# --- statistics -------------------------------------------------------------------------------
def test_statistics_counts_findings_per_rule_instead_of_listing_them(project):
    (project / "train.py").write_text(LEAKY_LOOP + LEAKY_LOOP.replace("import torch\n", "").replace("def train(", "def train_again("))
    result = run_leaklint("--statistics", "train.py", cwd=project)
    assert result.returncode == 1
    assert text(result)[0] == "2\tLL101\t[*] loss-accumulation\n"
    as_json = json.loads(run_leaklint("--statistics", "--output-format", "json", "train.py", cwd=project).stdout)
    assert as_json == [{"code": "LL101", "name": "loss-accumulation", "count": 2, "fixable": True}]


# --- colour -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, env, coloured",
    [
        ((), {}, False),  # not a terminal
        (("--color", "always"), {}, True),
        (("--color", "never"), {"FORCE_COLOR": "1"}, False),
        ((), {"FORCE_COLOR": "1", "NO_COLOR": ""}, True),
        (("--no-color",), {"FORCE_COLOR": "1", "NO_COLOR": ""}, False),
    ],
)
def test_color_follows_the_flag_then_no_color_then_force_color(leaky, args, env, coloured):
    out = run_leaklint(*args, "train.py", cwd=leaky, env=env).stdout.decode()
    assert ("\x1b[" in out) is coloured


# --- exclusion and per-file ignores on the command line ---------------------------------------
def test_exclude_and_extend_exclude_on_the_command_line(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    (project / "legacy").mkdir()
    (project / "legacy" / "old.py").write_text(LEAKY_LOOP)
    out, _ = text(run_leaklint("--extend-exclude", "legacy", "-q", cwd=project))
    assert out.splitlines() == [HEADLINE]
    out, _ = text(run_leaklint("--exclude", "legacy,train.py", cwd=project))
    assert "No Python files found" in out


def test_per_file_ignores_on_the_command_line(project):
    (project / "tests").mkdir()
    (project / "tests" / "test_train.py").write_text(LEAKY_LOOP)
    (project / "train.py").write_text(LEAKY_LOOP)
    out, _ = text(run_leaklint("--per-file-ignores", "tests/*:LL101", "-q", cwd=project))
    assert out.splitlines() == [HEADLINE]
    (project / "pyproject.toml").write_text('[tool.leaklint.per-file-ignores]\n"train.py" = ["LL1"]\n')
    out, _ = text(run_leaklint("--extend-per-file-ignores", "tests/*:LL101", cwd=project))
    assert out.strip() == "All checks passed!"
    assert run_leaklint("--per-file-ignores", "tests/*:LL101", cwd=project).returncode == 1  # replaces the config's


def test_a_per_file_ignore_without_codes_is_a_usage_error(project):
    result = run_leaklint("--per-file-ignores", "tests", cwd=project)
    assert result.returncode == 2
    assert "--per-file-ignores: expected GLOB:CODES" in text(result)[1]


# --- --exit-non-zero-on-fix -------------------------------------------------------------------
def test_exit_non_zero_on_fix_fails_a_run_that_fixed_everything(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    assert run_leaklint("--fix", "--exit-non-zero-on-fix", "train.py", cwd=project).returncode == 1
    assert "loss.detach()" in (project / "train.py").read_text() or "loss.item()" in (project / "train.py").read_text()
    assert run_leaklint("--fix", "--exit-non-zero-on-fix", "train.py", cwd=project).returncode == 0  # nothing left to fix
    (project / "other.py").write_text(LEAKY_LOOP)
    assert run_leaklint("--fix", "other.py", cwd=project).returncode == 0  # without the flag, as before


# --- --watch ----------------------------------------------------------------------------------
def test_watch_lints_again_after_a_change_and_stops_cleanly_on_ctrl_c(project):
    (project / "train.py").write_text(CLEAN_LOOP)
    env = {**os.environ, "NO_COLOR": "1", "LEAKLINT_WATCH_INTERVAL": "0.1"}
    process = subprocess.Popen([sys.executable, "-m", "leaklint", "--watch", "--no-cache", "-q", "."], cwd=project,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    stdout, stderr = _Lines(process.stdout), _Lines(process.stderr)
    try:
        stderr.wait_for("Starting leaklint in watch mode")
        stderr.wait_for("Watching for file changes")  # the first run has read the file
        time.sleep(0.05)  # a modification time of its own (coarse file-system clocks)
        (project / "train.py").write_text(LEAKY_LOOP)
        stderr.wait_for("File change detected")
        assert stdout.wait_for("LL101").startswith("train.py:10:9: LL101")
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            raise AssertionError(f"no exit 30 s after Ctrl-C; stderr so far:\n{stderr.text()}") from None
    assert process.returncode == 0, stderr.text()
    # One edit is one or two runs (a poll may catch the file emptied before it is rewritten), never more.
    assert stderr.text().count("File change detected") <= 2, stderr.text()


class _Lines:
    """A child's output stream read on a thread of its own, so that the child never blocks on a
    full pipe while the test waits for something else (a blocked child cannot exit on Ctrl-C)."""

    def __init__(self, stream) -> None:  # type: ignore[no-untyped-def]
        self._seen: queue.Queue[str] = queue.Queue()
        self._lines: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:  # type: ignore[no-untyped-def]
        for line in stream:
            self._lines.append(line)
            self._seen.put(line)

    def wait_for(self, needle: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._seen.get(timeout=left)
            except queue.Empty:
                break
            if needle in line:
                return line
        raise AssertionError(f"{needle!r} not seen within {timeout} s; seen:\n{self.text()}")

    def text(self) -> str:
        return "".join(self._lines)


def test_watch_refuses_fix(project):
    result = run_leaklint("--watch", "--fix", cwd=project)
    assert result.returncode == 2
    assert "cannot be combined with --fix" in text(result)[1]


# --- --add-noqa -------------------------------------------------------------------------------
def test_add_noqa_suppresses_every_finding_and_merges_into_an_existing_noqa(project):
    (project / "train.py").write_text(LEAKY_LOOP.replace("total_loss += loss", "total_loss += loss  # noqa: E501"))
    (project / "other.py").write_text(LEAKY_LOOP)
    result = run_leaklint("--add-noqa", cwd=project)
    out, err = text(result)
    assert result.returncode == 0, err
    assert err.strip() == "Added 2 noqa directives in 2 files."
    assert "total_loss += loss  # noqa: E501, LL101\n" in (project / "train.py").read_text()
    assert "total_loss += loss  # noqa: LL101\n" in (project / "other.py").read_text()
    assert run_leaklint(cwd=project).returncode == 0
    again = run_leaklint("--add-noqa", cwd=project)
    assert text(again)[1].strip() == "Added 0 noqa directives in 0 files."


def test_add_noqa_refuses_fix(project):
    result = run_leaklint("--add-noqa", "--fix", cwd=project)
    assert result.returncode == 2
    assert "cannot be combined with --fix" in text(result)[1]
