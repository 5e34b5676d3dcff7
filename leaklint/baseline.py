"""The baseline: today's findings recorded in a file, so that a run reports only new ones.

Teams adopting leaklint on a large codebase write one (``--write-baseline FILE``) and fail CI
only on findings that are not in it (``--baseline FILE`` or ``baseline = "FILE"`` in the
configuration). A finding matches an entry by rule, file (relative to the baseline's folder, so
the run may start anywhere) and fingerprint (:mod:`leaklint.fingerprints`: the text of its line
and its occurrence among equal lines), never by line number: edits elsewhere in the file do not
bring a recorded finding back. Entries that no finding matches any more are *stale*: the run says
how many, so the file can shrink (write it again).

The file is JSON, sorted, one entry per finding, with the line and message only for people
reading it::

    {"tool": "leaklint", "version": 1, "findings": [
        {"code": "LL201", "path": "src/eval.py", "fingerprint": "9f2c...", "line": 40, "message": "..."}]}
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

if TYPE_CHECKING:
    from leaklint.findings import Finding

FORMAT_VERSION = 1


class BaselineError(Exception):
    """A baseline file that cannot be read or written: the message names it and the reason."""


@dataclass(frozen=True)
class Entry:
    code: str
    path: str
    fingerprint: str
    line: int = 0
    message: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.code, self.path, self.fingerprint)


@dataclass(frozen=True)
class Comparison:
    """A run's findings against a baseline."""

    new: tuple[Finding, ...]
    #: Findings the baseline records: not reported.
    known: tuple[Finding, ...]
    #: Entries that no finding matched: fixed, or their code changed.
    stale: tuple[Entry, ...]


def entries_for(findings: Sequence[Finding], sources: Mapping[str, str], folder: Path) -> list[tuple[Finding, Entry]]:
    """Each finding with the entry that records it; paths relative to ``folder``."""
    from leaklint.fingerprints import fingerprints
    from leaklint.report._source import SourceLines

    def relative(finding: Finding) -> str:
        return _relative_path(finding.path, folder)

    pairs = []
    for finding, print_ in fingerprints(findings, SourceLines(sources), path_of=relative):
        pairs.append((finding, Entry(finding.code, relative(finding), print_, finding.line, finding.message)))
    return pairs


def write(path: Path, findings: Sequence[Finding], sources: Mapping[str, str], *, shown: str | None = None) -> int:
    """Record ``findings`` in ``path`` (replacing it whole, never half-written); returns how many.
    ``shown``: the path as messages name it."""
    entries = sorted((entry for _, entry in entries_for(findings, sources, _folder_of(path))), key=lambda e: (e.path, e.line, e.code, e.fingerprint))
    data = {
        "tool": "leaklint",
        "version": FORMAT_VERSION,
        "findings": [
            {"code": e.code, "path": e.path, "fingerprint": e.fingerprint, "line": e.line, "message": e.message}
            for e in entries
        ],
    }
    from leaklint.cache import atomic_write

    try:
        atomic_write(path, (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    except OSError as error:
        raise BaselineError(f"{shown or path}: cannot write the baseline: {error.strerror or error}") from None
    return len(entries)


def read(path: Path, *, shown: str | None = None) -> list[Entry]:
    """The entries of the baseline file ``path`` (``shown``: the path as messages name it)."""
    name = shown or str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{name}: baseline file not found (write one with --write-baseline {name})") from None
    except OSError as error:
        raise BaselineError(f"{name}: cannot read the baseline: {error.strerror or error}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BaselineError(f"{name}: not a leaklint baseline: invalid JSON ({error})") from None
    if not isinstance(data, dict) or data.get("tool") != "leaklint" or not isinstance(data.get("findings"), list):
        raise BaselineError(f"{name}: not a leaklint baseline (expected a JSON object with \"tool\": \"leaklint\" and a \"findings\" list)")
    if data.get("version") != FORMAT_VERSION:
        raise BaselineError(f"{name}: baseline format version {data.get('version')!r} is not {FORMAT_VERSION}; write it again with --write-baseline")
    entries = []
    for number, item in enumerate(data["findings"], start=1):
        try:
            entries.append(Entry(str(item["code"]), str(item["path"]), str(item["fingerprint"]), int(item.get("line", 0)), str(item.get("message", ""))))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise BaselineError(f"{name}: entry {number} lacks a code, a path or a fingerprint") from None
    return entries


def compare(findings: Sequence[Finding], sources: Mapping[str, str], baseline: Path, entries: Iterable[Entry]) -> Comparison:
    """Split ``findings`` into new ones and ones the baseline records; list the stale entries."""
    remaining: dict[tuple[str, str, str], list[Entry]] = {}
    for entry in entries:
        remaining.setdefault(entry.key, []).append(entry)
    new: list[Finding] = []
    known: list[Finding] = []
    for finding, entry in entries_for(findings, sources, _folder_of(baseline)):
        matches = remaining.get(entry.key)
        if matches:
            matches.pop()
            known.append(finding)
        else:
            new.append(finding)
    stale = tuple(entry for left in remaining.values() for entry in left)
    return Comparison(tuple(new), tuple(known), stale)


def _folder_of(path: Path) -> Path:
    return Path(os.path.abspath(path)).parent


def _relative_path(path: str, folder: Path) -> str:
    """``path`` relative to ``folder``, with forward slashes (the same on every OS); standard
    input and paths on another drive stay as they are."""
    if path.startswith("<") or path == "-":
        return path
    try:
        return Path(os.path.relpath(os.path.abspath(path), folder)).as_posix()
    except ValueError:  # another drive on Windows
        return Path(path).as_posix()
