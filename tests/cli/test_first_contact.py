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


def test_stdin_filename_alone_reads_standard_input_as_ruff_does(project):
    result = run_leaklint("--stdin-filename", "train.py", cwd=project, input=LEAKY_LOOP.encode())
    assert result.returncode == 1
    assert text(result)[0].startswith("train.py:10:9: LL101")


def test_stdin_filename_with_paths_but_no_dash_is_a_usage_error(project):
    (project / "train.py").write_text(CLEAN_LOOP)
    result = run_leaklint("--stdin-filename", "x.py", "train.py", cwd=project, input=LEAKY_LOOP.encode())
    assert result.returncode == 2 and result.stdout == b""
    assert one_error_line(result) == (
        "leaklint: error: --stdin-filename names standard input, but '-' is not among the paths: add '-' to lint standard input"
    )


# --- selectors that match no rule ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--select", "LL9999"], "--select: unknown rule 'LL9999': no rule's code starts with it; 'leaklint rules' lists the rules"),
        (["--extend-select", "LL1011"], "--extend-select: unknown rule 'LL1011': no rule's code starts with it (did you mean 'LL101'?); 'leaklint rules' lists the rules"),
        (["--ignore", "LL1,ZZ9"], "--ignore: unknown rule 'ZZ9': no rule's code starts with it; 'leaklint rules' lists the rules"),
        (["--select", "LL1O1"], "--select: invalid selector 'LL1O1' (did you mean 'LL101'?): expected a rule code such as 'LL101', a prefix such as 'LL1', or 'ALL'"),
        (["--select", "LL10l"], "--select: invalid selector 'LL10l' (did you mean 'LL101'?): expected a rule code such as 'LL101', a prefix such as 'LL1', or 'ALL'"),
        (["--select", "loss-accumulation"], "--select: invalid selector 'loss-accumulation' (did you mean 'LL101', the code of loss-accumulation?): expected a rule code such as 'LL101', a prefix such as 'LL1', or 'ALL'"),
    ],
)
def test_a_selector_on_the_command_line_that_matches_no_rule_is_an_error(project, args, message):
    (project / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint(*args, "train.py", cwd=project)
    assert result.returncode == 2 and result.stdout == b""
    assert one_error_line(result) == f"leaklint: error: {message}"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('select = ["LL999"]', "select: unknown rule 'LL999'"),
        ('extend-select = ["LL4O1"]', "extend-select: invalid selector 'LL4O1' (did you mean 'LL401'?)"),
        ('ignore = ["LL2011"]', "ignore: unknown rule 'LL2011': no rule's code starts with it (did you mean 'LL201'?)"),
        ('fixable = ["XX"]', "fixable: unknown rule 'XX'"),
        ('unfixable = ["LL8"]', "unfixable: unknown rule 'LL8'"),
        ('extend-safe-fixes = ["LL1033"]', "extend-safe-fixes: unknown rule 'LL1033'"),
        ('extend-unsafe-fixes = ["LL6"]', "extend-unsafe-fixes: unknown rule 'LL6'"),
        ('[tool.leaklint.per-file-ignores]\n"tests/**" = ["LL301", "LL30111"]', "per-file-ignores 'tests/**': unknown rule 'LL30111'"),
    ],
)
def test_a_selector_in_the_config_that_matches_no_rule_is_an_error(project, table, message):
    (project / "pyproject.toml").write_text(f"[tool.leaklint]\n{table}\n")
    (project / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("train.py", cwd=project)
    assert result.returncode == 2 and result.stdout == b""
    assert one_error_line(result).startswith(f"leaklint: error: pyproject.toml: [tool.leaklint] {message}")


def test_every_known_code_and_prefix_is_accepted(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("--select", "LL,ALL,LL1,LL101", "--ignore", "LL5", "train.py", cwd=project)
    assert result.returncode == 1 and result.stderr == b""


# --- configuration files that were ignored ----------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"garbage\n", "pyproject.toml: invalid TOML: Expected '=' after a key in a key/value pair (at line 1, column 8)"),
        ("[tool.leaklint]\nselect = ['LL1']\n".encode("utf-16"), "pyproject.toml: invalid TOML: not UTF-8 (byte 0xff at offset 0)"),
        (b"[tools.leaklint]\nselect = ['LL1']\n", "pyproject.toml: [tools.leaklint] is not read: leaklint's settings go in [tool.leaklint]"),
        (b"[project]\nname = 'x'\n[tool.leak-lint]\nignore = ['LL1']\n", "pyproject.toml: [tool.leak-lint] is not read: leaklint's settings go in [tool.leaklint]"),
        (b"tool = 'leaklint'\n", "pyproject.toml: 'tool' must be a table, got str 'leaklint'"),
    ],
)
def test_a_garbage_pyproject_is_an_error_not_the_defaults(project, content, message):
    (project / "pyproject.toml").write_bytes(content)
    (project / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("train.py", cwd=project)
    assert result.returncode == 2 and result.stdout == b""
    assert one_error_line(result) == f"leaklint: error: {message}"


def test_a_pyproject_that_does_not_configure_leaklint_still_gives_the_defaults(project):
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\ndependencies = ['leaklint-ml']\n")
    (project / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("train.py", cwd=project)
    assert result.returncode == 1 and result.stderr == b""


# --- the result cache ------------------------------------------------------------------------------
def cached_entry(cache_dir: Path) -> Path:
    [entry] = cache_dir.rglob("*.json")
    return entry


def corrupt_a_byte(entry: Path) -> None:
    """A flipped byte inside the message: still valid JSON, but not what was stored."""
    data = entry.read_bytes()
    at = data.index(b"autograd graph")
    entry.write_bytes(data[:at] + b"X" + data[at + 1 :])


def move_to_line_14(entry: Path) -> None:
    """Valid JSON with a valid checksum, but ``"line": "14"``: a string where a number belongs."""
    from leaklint.cache import _checksum

    data = json.loads(entry.read_bytes())
    data["findings"][0]["line"] = "14"
    data["checksum"] = _checksum(data)
    entry.write_text(json.dumps(data))


def claim_another_file(entry: Path) -> None:
    from leaklint.cache import _checksum

    data = json.loads(entry.read_bytes())
    data["findings"][0]["path"] = "other.py"
    data["checksum"] = _checksum(data)
    entry.write_text(json.dumps(data))


@pytest.mark.parametrize("corrupt", [corrupt_a_byte, move_to_line_14, claim_another_file])
def test_a_corrupted_cache_entry_is_linted_afresh(project, corrupt):
    (project / "train.py").write_text(LEAKY_LOOP)
    args = ("--format", "json", "--cache-dir", "cache", "train.py")
    fresh = run_leaklint(*args, cwd=project)
    entry = cached_entry(project / "cache")
    corrupt(entry)
    served = run_leaklint(*args, cwd=project)
    assert served.returncode == fresh.returncode == 1
    assert json.loads(served.stdout) == json.loads(fresh.stdout)
    assert json.loads(served.stdout)[0]["line"] == 10
    assert json.loads(entry.read_bytes())["findings"][0]["line"] == 10, "the entry is rewritten"


# --- nothing to check ----------------------------------------------------------------------------
def test_an_empty_directory_says_no_file_was_found(project):
    (project / "empty").mkdir()
    (project / "empty" / "notes.txt").write_text("not Python\n")
    result = run_leaklint("empty", cwd=project)
    out, err = text(result)
    assert result.returncode == 0
    assert err == "leaklint: warning: no Python files found in empty\n"
    assert out == "No Python files found: nothing was checked\n"
    assert "All checks passed" not in out


def test_files_all_excluded_say_so_too(project):
    (project / "pyproject.toml").write_text('[tool.leaklint]\nextend-exclude = ["generated"]\n')
    (project / "generated").mkdir()
    (project / "generated" / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("--force-exclude", "generated/train.py", cwd=project)
    assert result.returncode == 0
    assert text(result) == ("No Python files found: nothing was checked\n", "leaklint: warning: no Python files found in generated/train.py\n")


def test_a_path_that_does_not_exist_is_an_error_not_a_warning(project):
    result = run_leaklint("missing", cwd=project)
    assert result.returncode == 2
    assert "no Python files found" not in text(result)[1]


# --- options that did nothing ------------------------------------------------------------------------
def test_unsafe_fixes_without_fix_or_diff_warns(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("--unsafe-fixes", "train.py", cwd=project)
    assert result.returncode == 1
    assert text(result)[1] == "leaklint: warning: --unsafe-fixes has no effect without --fix or --diff\n"
    assert run_leaklint("--unsafe-fixes", "--diff", "train.py", cwd=project).stderr.count(b"warning") == 0


# --- where the output goes ------------------------------------------------------------------------
@pytest.mark.parametrize("mode", [[], ["--fix"]], ids=["check", "fix"])
def test_an_output_file_that_cannot_be_written_is_a_one_line_error(project, mode):
    (project / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint(*mode, "--output-file", "missing/report.txt", "train.py", cwd=project)
    assert result.returncode == 2
    assert one_error_line(result) == "leaklint: error: cannot write missing/report.txt: No such file or directory"


def test_verify_plot_into_a_missing_directory_is_refused_before_measuring(project):
    result = run_leaklint("verify", "LL101", "--plot", "missing/verify.png", cwd=project)
    assert result.returncode == 2 and result.stdout == b""
    assert one_error_line(result) == "leaklint: error: --plot: cannot write missing/verify.png: no directory missing"
