"""Applying fixes: merge text edits without overlaps, render diffs, write files atomically.

Fixes arrive as character-offset :class:`~leaklint.findings.TextEdit` spans on the decoded
source, so applying them never re-formats anything outside the edited spans: comments, quoting,
line endings and indentation elsewhere stay byte-for-byte as they were. Overlapping fixes are
resolved deterministically — the one that starts first wins — and the others stay findings that
the next pass (after re-linting the fixed text) picks up.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from leaklint.findings import Finding, TextEdit

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class FileChangedError(Exception):
    """The file on disk is no longer what was linted: writing would lose someone's edit."""


def line_starts(text: str) -> list[int]:
    """Offset of the first character of every line (Python's own line breaks: \\r\\n, \\r, \\n)."""
    return [0, *(match.end() for match in _LINE_BREAK.finditer(text))]


@dataclass
class FixOutcome:
    text: str
    applied: list[Finding] = field(default_factory=list)
    #: Fixable findings left for a later pass because an earlier fix overlapped them.
    deferred: list[Finding] = field(default_factory=list)
    #: The edits applied, in the order they were applied (by offset; same-offset ones as proposed).
    edits: list[TextEdit] = field(default_factory=list)


def _overlaps(edit: TextEdit, taken: list[TextEdit]) -> bool:
    for other in taken:
        if edit == other:
            continue  # the same edit twice (two fixes adding the same import) is fine
        if edit.start == edit.end == other.start == other.end:
            return True  # two different insertions at one point: order would be arbitrary
        if edit.start < other.end and other.start < edit.end:
            return True
        if edit.start == edit.end and other.start < edit.start < other.end:
            return True
        if other.start == other.end and edit.start < other.start < edit.end:
            return True
    return False


def apply_fixes(text: str, findings: Sequence[Finding], allowed: Callable[[Finding], bool]) -> FixOutcome:
    """Apply the fixes of ``findings`` that ``allowed`` accepts and that do not overlap."""
    candidates = [f for f in findings if f.fix is not None and f.fix.edits and allowed(f)]
    candidates.sort(key=lambda f: (min(e.start for e in f.fix.edits), f.line, f.column, f.code))  # type: ignore[union-attr]
    outcome = FixOutcome(text)
    taken: list[TextEdit] = []
    for finding in candidates:
        edits = finding.fix.edits  # type: ignore[union-attr]
        if any(_overlaps(edit, taken) for edit in edits):
            outcome.deferred.append(finding)
            continue
        taken.extend(edit for edit in edits if edit not in taken)
        outcome.applied.append(finding)
    pieces = []
    cursor = 0
    outcome.edits = sorted(taken, key=lambda e: (e.start, e.end))
    for edit in outcome.edits:
        pieces.append(text[cursor : edit.start])
        pieces.append(edit.replacement)
        cursor = edit.end
    pieces.append(text[cursor:])
    outcome.text = "".join(pieces)
    return outcome


def unified_diff(path: str, before: str, after: str) -> str:
    """A ``diff -u`` style patch of one file (empty when nothing changed)."""
    import difflib  # here, not at the top: a lint run imports this module for line_starts only

    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path.lstrip('/')}",
        tofile=f"b/{path.lstrip('/')}",
    )
    patch = "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n" for line in lines)
    return patch


def write_atomically(path: Path, data: bytes, *, expected: bytes) -> None:
    """Replace ``path`` with ``data`` in one step, keeping its mode.

    The new content goes to a temporary file in the same directory, is flushed to disk, and is
    renamed over the original; the directory is then flushed too, so the rename itself survives a
    power loss. A crash or Ctrl-C leaves either the old or the new file, never a truncated one,
    and no temporary file. If the file no longer holds ``expected`` (edited meanwhile), nothing is
    written. A symbolic link is followed: its target gets the new content (the temporary file goes
    next to the target, so the rename stays within one file system) and the link stays a link.
    """
    target = Path(os.path.realpath(path))
    current = target.read_bytes()
    if current != expected:
        raise FileChangedError(f"{path} changed on disk while it was being fixed; not overwritten")
    mode = target.stat().st_mode & 0o7777
    import tempfile

    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".leaklint-tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
    _fsync_directory(target.parent)


def _fsync_directory(directory: Path) -> None:
    """Flush a directory's entries (the rename) to disk, where the platform allows it."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # e.g. Windows, where directories cannot be opened this way
    try:
        os.fsync(descriptor)
    except OSError:
        pass  # some file systems refuse fsync on a directory; the rename is done either way
    finally:
        os.close(descriptor)
