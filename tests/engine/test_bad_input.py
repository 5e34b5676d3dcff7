"""Bad input, end to end: each problem is one line on stderr naming the file and the reason, the
other files are still linted, and the exit status is 2. Valid-but-unusual files lint normally."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys

import pytest

from conftest import LEAKY_LOOP, run_leaklint, text

GOOD_FINDING = "good.py:10:9: LL101"


def lint_with_good_file(project, *paths):
    (project / "good.py").write_text(LEAKY_LOOP)
    result = run_leaklint(*paths, "good.py", cwd=project)
    out, err = text(result)
    assert GOOD_FINDING in out, "the good file must still be linted"
    assert "Traceback" not in err
    return result, err


def assert_one_error_line(err, path, reason):
    lines = [line for line in err.splitlines() if line]
    assert lines == [f"{path}: error: {reason}"] or (
        len(lines) == 1 and lines[0].startswith(f"{path}: error: ") and reason in lines[0]
    ), err


def test_syntax_error(project):
    (project / "broken.py").write_text("def f(:\n    pass\n")
    result, err = lint_with_good_file(project, "broken.py")
    assert result.returncode == 2
    assert_one_error_line(err, "broken.py", "syntax error at 1:")


def test_undecodable_bytes(project):
    (project / "latin.py").write_bytes(b"x = 'caf\xe9'\n")
    result, err = lint_with_good_file(project, "latin.py")
    assert result.returncode == 2
    assert_one_error_line(err, "latin.py", "cannot decode as utf-8: byte 0xe9 at offset 8")


def test_a_coding_cookie_is_honoured(project):
    (project / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nx = 'caf\xe9'\n")
    result, err = lint_with_good_file(project, "latin.py")
    assert result.returncode == 1 and err == ""


def test_nul_byte(project):
    (project / "binary.py").write_bytes(b"x = 1\x00\x01\x02\n")
    result, err = lint_with_good_file(project, "binary.py")
    assert result.returncode == 2
    assert_one_error_line(err, "binary.py", "contains a NUL byte (binary file?)")


def test_empty_file_is_fine(project):
    (project / "empty.py").write_bytes(b"")
    result, err = lint_with_good_file(project, "empty.py")
    assert result.returncode == 1 and err == ""


def test_bom_and_crlf_are_linted_at_the_right_place(project):
    source = LEAKY_LOOP.replace("\n", "\r\n").encode("utf-8-sig")
    (project / "windows.py").write_bytes(source)
    result = run_leaklint("windows.py", cwd=project)
    out, err = text(result)
    assert result.returncode == 1 and err == ""
    assert out.startswith("windows.py:10:9: LL101")


def generated_file(size: int) -> str:
    """A leaky function followed by a generated table of numbers, ``size`` bytes in all."""
    row = "    [" + ", ".join(["0.123456"] * 8) + "],\n"
    rows = (size - len(LEAKY_LOOP) - 20) // len(row)
    return LEAKY_LOOP + "TABLE = [\n" + row * rows + "]\n"


def test_a_five_megabyte_file_is_refused_clearly(project):
    (project / "huge.py").write_text(generated_file(5 * 1024 * 1024))
    result, err = lint_with_good_file(project, "huge.py")
    assert result.returncode == 2
    assert_one_error_line(err, "huge.py", "file is 5.0 MiB, above max-file-size (2.0 MiB); not linted")


def test_max_file_size_lets_a_big_file_through(project):
    (project / "pyproject.toml").write_text('[tool.leaklint]\nmax-file-size = "1 MiB"\n')
    (project / "big.py").write_text(generated_file(900 * 1024))
    result = run_leaklint("big.py", cwd=project)
    out, err = text(result)
    assert result.returncode == 1, err
    assert out.startswith("big.py:10:9: LL101")


def test_deep_but_legal_nesting_is_analysed(project):
    deep = "total = 0\nfor x, y in loader:\n    loss = criterion(model(x), y)\n    loss.backward()\n    total += loss + " + " + ".join(["1"] * 900) + "\n"
    (project / "deep.py").write_text(deep)
    result = run_leaklint("deep.py", cwd=project)
    out, err = text(result)
    assert result.returncode == 1, err
    assert "deep.py:5:5: LL101" in out


def test_pathological_nesting_is_refused_clearly(project):
    training = "for x, y in loader:\n    loss = criterion(model(x), y)\n    loss.backward()\n"
    (project / "nested.py").write_text(training + "x = " + " + ".join(["1"] * 1600) + "\n")  # depth 1,603
    (project / "parens.py").write_text("x = " + "(" * 300 + "1" + ")" * 300 + "\n")
    result, err = lint_with_good_file(project, "nested.py", "parens.py")
    assert result.returncode == 2
    lines = sorted(err.splitlines())
    assert lines[0].startswith("nested.py: error: ") and "too deeply nested" in lines[0]
    assert lines[1].startswith("parens.py: error: syntax error") and "nested parentheses" in lines[1]


def test_deep_nesting_where_no_rule_can_report_is_no_error(project):
    """Only the analysis needs a bounded depth; a deep file with no training code is simply clean."""
    (project / "table.py").write_text("x = " + " + ".join(["1"] * 1600) + "\n")
    result = run_leaklint("table.py", cwd=project)
    out, err = text(result)
    assert result.returncode == 0, err
    assert err == ""


def test_a_path_that_does_not_exist(project):
    result, err = lint_with_good_file(project, "missing.py")
    assert result.returncode == 2
    assert_one_error_line(err, "missing.py", "no such file or directory")


@pytest.fixture
def unreadable(project):
    path = project / "secret.py"
    path.write_text(LEAKY_LOOP)
    path.chmod(0)
    yield path
    path.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_an_unreadable_file(project, unreadable):
    if os.geteuid() == 0:
        # root reads anything: drop the capabilities that let it bypass file permissions.
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: cannot make a file unreadable")
        (project / "good.py").write_text(LEAKY_LOOP)
        caps = "-dac_override,-dac_read_search"
        command = ["setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}", sys.executable, "-m", "leaklint", "secret.py", "good.py"]
        result = subprocess.run(command, cwd=project, capture_output=True, env={**os.environ, "NO_COLOR": "1"})
        out, err = text(result)
        assert GOOD_FINDING in out, err
    else:
        result, err = lint_with_good_file(project, "secret.py")
    assert result.returncode == 2
    assert_one_error_line(err, "secret.py", "permission denied")


def test_a_symlink_loop(project):
    os.symlink("loop.py", project / "loop.py")
    result, err = lint_with_good_file(project, "loop.py")
    assert result.returncode == 2
    assert_one_error_line(err, "loop.py", "symbolic link loop")


def test_a_symlink_loop_met_while_walking(project):
    (project / "src").mkdir()
    os.symlink("a.py", project / "src" / "a.py")
    result, err = lint_with_good_file(project, "src")
    assert result.returncode == 2
    assert_one_error_line(err, "src/a.py", "symbolic link loop")


def test_a_directory_named_like_a_python_file_is_walked(project):
    (project / "x.py").mkdir()
    (project / "x.py" / "train.py").write_text(LEAKY_LOOP)
    result, err = lint_with_good_file(project, "x.py")
    assert result.returncode == 1 and err == ""
    assert "x.py/train.py:10:9: LL101" in text(result)[0]
