"""Fingerprints of findings that survive edits elsewhere in the file.

A finding is identified by its rule, its file, the stripped text of the line it is on (the cell's
line in a notebook) and, among the findings of the same rule on equal lines of that file, its
occurrence index. Lines inserted or removed above it change its line number but not its
fingerprint. SARIF's ``partialFingerprints`` (so that code scanning tracks an alert across
commits) and the baseline (so that a recorded finding stays recorded) both use them.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Iterable, Iterator

from leaklint.report._paths import raw_bytes

if TYPE_CHECKING:
    from leaklint.findings import Finding
    from leaklint.report._source import SourceLines


def anchor(finding: Finding, source_lines: SourceLines) -> str:
    """The text a finding is anchored to: its stripped line, or its position when the text of the
    line is not known (or blank)."""
    line_text = source_lines.get(finding.path, finding.line, finding.cell)
    if line_text and line_text.strip():
        return f"text:{line_text.strip()}"
    return f"cell:{finding.cell}:line:{finding.line}" if finding.cell is not None else f"line:{finding.line}"


def fingerprint(code: str, path: str, anchor_text: str, occurrence: int) -> str:
    """SHA-256 (hex) of the parts, NUL-separated so that no two different tuples collide."""
    return hashlib.sha256(raw_bytes("\0".join((code, path, anchor_text, str(occurrence))))).hexdigest()


def fingerprints(findings: Iterable[Finding], source_lines: SourceLines, *, path_of=None) -> Iterator[tuple[Finding, str]]:  # type: ignore[no-untyped-def]
    """Each finding with its fingerprint, in the order given (the engine's: by path, then line).
    ``path_of(finding)`` names the file in the fingerprint (default: the finding's path as shown)."""
    occurrences: dict[tuple[str, str, str], int] = {}
    for finding in findings:
        path = path_of(finding) if path_of is not None else finding.path
        key = (finding.code, path, anchor(finding, source_lines))
        occurrence = occurrences.get(key, 0)
        occurrences[key] = occurrence + 1
        yield finding, fingerprint(*key, occurrence)
