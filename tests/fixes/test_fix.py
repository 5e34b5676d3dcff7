"""Applying fixes: only the edited spans change, overlaps resolve deterministically, writes are atomic."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from leaklint.findings import Applicability, Confidence, Finding, Fix, Severity, TextEdit
from leaklint.fixes.apply import FileChangedError, apply_fixes, line_starts, unified_diff, write_atomically


def edit(start: int, end: int, replacement: str) -> TextEdit:
    return TextEdit(start, end, replacement, 1, start + 1, 1, end + 1)


def finding(*edits: TextEdit, code: str = "LL101", line: int = 1, applicability: Applicability = Applicability.SAFE) -> Finding:
    return Finding(
        "a.py", line, 1, line, 2, code, "name", Severity.LEAK, Confidence.HIGH, "message", "help",
        fix=Fix("title", applicability, tuple(edits)),
    )


def everything(_: Finding) -> bool:
    return True


def test_edits_replace_only_their_span():
    text = "total += loss  # keep this comment\r\nnext_line()\r\n"
    start = text.index("loss")
    outcome = apply_fixes(text, [finding(edit(start, start + 4, "loss.detach()"))], everything)
    assert outcome.text == "total += loss.detach()  # keep this comment\r\nnext_line()\r\n"
    assert len(outcome.applied) == 1 and outcome.deferred == []


def test_overlapping_fixes_first_wins_and_the_other_waits_for_the_next_pass():
    text = "abcdef"
    first = finding(edit(1, 4, "X"), line=1)
    second = finding(edit(3, 5, "Y"), line=2)
    outcome = apply_fixes(text, [second, first], everything)
    assert outcome.text == "aXef"
    assert outcome.applied == [first] and outcome.deferred == [second]


def test_two_fixes_adding_the_same_import_share_it():
    text = "a\nb\n"
    shared = edit(0, 0, "import torch\n")
    one = finding(shared, edit(0, 1, "A"), line=1)
    two = finding(shared, edit(2, 3, "B"), line=2)
    outcome = apply_fixes(text, [one, two], everything)
    assert outcome.text == "import torch\nA\nB\n"
    assert len(outcome.applied) == 2


def test_fixes_that_are_not_allowed_are_left_alone():
    text = "abc"
    unsafe = finding(edit(0, 1, "X"), applicability=Applicability.UNSAFE)
    outcome = apply_fixes(text, [unsafe], lambda f: f.fix.applicability is Applicability.SAFE)
    assert outcome.text == "abc" and outcome.applied == []


def test_line_starts_follow_python_line_breaks_only():
    assert line_starts("a\r\nb\rc\nd\x0ce") == [0, 3, 5, 7]


def test_unified_diff_names_both_sides_and_is_empty_without_changes():
    assert unified_diff("t.py", "a\n", "a\n") == ""
    patch = unified_diff("t.py", "x = 1\n", "x = 2\n")
    assert patch.splitlines()[:2] == ["--- a/t.py", "+++ b/t.py"]
    assert "-x = 1" in patch and "+x = 2" in patch


def test_atomic_write_keeps_the_mode_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "train.py"
    path.write_bytes(b"old\n")
    path.chmod(0o750)
    write_atomically(path, b"new\n", expected=b"old\n")
    assert path.read_bytes() == b"new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert os.listdir(tmp_path) == ["train.py"]


def test_a_file_changed_meanwhile_is_not_overwritten(tmp_path):
    path = tmp_path / "train.py"
    path.write_bytes(b"edited by someone else\n")
    with pytest.raises(FileChangedError):
        write_atomically(path, b"new\n", expected=b"old\n")
    assert path.read_bytes() == b"edited by someone else\n"
    assert os.listdir(tmp_path) == ["train.py"]


def test_a_symlink_is_followed_and_stays_a_link(tmp_path):
    real = tmp_path / "src" / "train.py"
    real.parent.mkdir()
    real.write_bytes(b"old\n")
    real.chmod(0o640)
    link = tmp_path / "link.py"
    link.symlink_to(Path("src") / "train.py")
    write_atomically(link, b"new\n", expected=b"old\n")
    assert link.is_symlink() and os.readlink(link) == str(Path("src") / "train.py")
    assert real.read_bytes() == b"new\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["link.py", "src"] and os.listdir(real.parent) == ["train.py"]


@pytest.mark.parametrize("failing", ["write", "fsync", "replace"])
def test_an_interrupted_write_leaves_the_original_intact_and_no_temporary_file(tmp_path, monkeypatch, failing):
    path = tmp_path / "train.py"
    path.write_bytes(b"old\n")

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    if failing == "write":
        real_fdopen = os.fdopen

        class Interrupted:
            def __init__(self, stream):
                self.stream = stream

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.stream.close()

            def write(self, data):
                self.stream.write(data[: len(data) // 2])
                raise KeyboardInterrupt

        monkeypatch.setattr(os, "fdopen", lambda *a, **k: Interrupted(real_fdopen(*a, **k)))
    else:
        monkeypatch.setattr(os, failing, interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, b"new content\n", expected=b"old\n")
    monkeypatch.undo()
    assert path.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["train.py"]


def test_the_directory_is_flushed_after_the_rename(tmp_path, monkeypatch):
    path = tmp_path / "train.py"
    path.write_bytes(b"old\n")
    calls = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "replace", lambda *a: (calls.append("replace"), real_replace(*a))[1])
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"), real_fsync(fd))[1])
    write_atomically(path, b"new\n", expected=b"old\n")
    assert calls == ["file", "replace", "dir"]
