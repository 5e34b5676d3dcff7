"""The triage file (JSON Lines): one verdict per finding, and how findings are matched to it.

Each line is one object::

    {"repo": "nanoGPT", "path": "nanoGPT/train.py", "line": 216, "code": "LL201",
     "snippet": "logits, loss = model(X, Y)", "verdict": "false",
     "reason": "estimate_loss() is decorated with @torch.no_grad()", "confidence": "medium",
     "pass": "default"}

``path`` is relative to the corpus folder (its first part is ``repo``); a notebook's finding also
has ``cell`` (1-based, every cell counted). ``snippet`` is the flagged source line, stripped, so an
entry survives small line shifts: a finding matches an entry with the same path, cell, code and
snippet, and ``line`` only decides between several such entries (the nearest wins). ``verdict`` is
``true`` (the code really has the problem the rule describes, in the way it runs), ``false`` (the
rule's premise does not hold there) or ``debatable`` (it depends on how the code is used); an empty
verdict marks an entry still to be triaged. ``confidence`` and ``pass`` (``default``: reported with
the default rules; ``select-all``: only with ``--select ALL``) are informational; ``message``, the
finding's message, only tells apart two findings of the same rule on the same line.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

VERDICTS = ("true", "false", "debatable")
CONFIDENCES = ("low", "medium", "high")
REQUIRED = ("repo", "path", "line", "code", "snippet", "verdict", "reason")
OPTIONAL = ("cell", "confidence", "pass", "message")


class TriageError(Exception):
    """The triage file cannot be used; the message names the file, the line and the reason."""


@dataclass(frozen=True)
class Finding:
    """One finding of the run, with the source line it points at."""

    path: str
    cell: int | None
    line: int
    column: int
    code: str
    confidence: str
    message: str
    snippet: str

    @property
    def repo(self) -> str:
        return self.path.split("/", 1)[0]

    @property
    def key(self) -> tuple[str, int | None, str, str]:
        return (self.path, self.cell, self.code, self.snippet)

    def location(self) -> str:
        cell = f"[cell {self.cell}]" if self.cell is not None else ""
        return f"{self.path}{cell}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Entry:
    """One line of the triage file."""

    number: int
    repo: str
    path: str
    cell: int | None
    line: int
    code: str
    snippet: str
    verdict: str
    reason: str
    confidence: str | None
    pass_: str | None
    message: str | None

    @property
    def key(self) -> tuple[str, int | None, str, str]:
        return (self.path, self.cell, self.code, self.snippet)

    def location(self) -> str:
        cell = f"[cell {self.cell}]" if self.cell is not None else ""
        return f"{self.path}{cell}:{self.line}"


def load_triage(path: Path) -> list[Entry]:
    """Read and check every line of the triage file (a missing file is an empty triage)."""
    if not path.exists():
        return []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise TriageError(f"{path}: cannot read it ({error})") from None
    entries = []
    for number, text in enumerate(lines, start=1):
        if text.strip():
            entries.append(_entry(f"{path}:{number}", number, text))
    return entries


def _entry(where: str, number: int, text: str) -> Entry:
    try:
        data = json.loads(text)
    except ValueError as error:
        raise TriageError(f"{where}: not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise TriageError(f"{where}: not a JSON object")
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise TriageError(f"{where}: missing {', '.join(missing)}")
    unknown = set(data) - set(REQUIRED) - set(OPTIONAL)
    if unknown:
        raise TriageError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    for key in ("repo", "path", "code", "snippet", "reason"):
        if not isinstance(data[key], str):
            raise TriageError(f"{where}: '{key}' must be a string")
    for key in ("line", "cell"):
        value = data.get(key)
        if (key == "line" or value is not None) and not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            raise TriageError(f"{where}: '{key}' must be a positive integer")
    verdict = data["verdict"]
    if verdict not in (*VERDICTS, ""):
        raise TriageError(f"{where}: 'verdict' must be one of {', '.join(VERDICTS)} (or \"\" while untriaged), not {verdict!r}")
    if verdict and not data["reason"].strip():
        raise TriageError(f"{where}: a '{verdict}' verdict needs a one-line reason")
    if "\n" in data["reason"]:
        raise TriageError(f"{where}: the reason must be one line")
    if data["path"].split("/", 1)[0] != data["repo"]:
        raise TriageError(f"{where}: 'path' must start with the repo folder {data['repo']!r}")
    for key in ("pass", "message"):
        if not isinstance(data.get(key, ""), str):
            raise TriageError(f"{where}: '{key}' must be a string")
    if data.get("confidence") not in (None, *CONFIDENCES):
        raise TriageError(f"{where}: 'confidence' must be one of {', '.join(CONFIDENCES)}")
    return Entry(number, data["repo"], data["path"], data.get("cell"), data["line"], data["code"],
                 data["snippet"], verdict, data["reason"], data.get("confidence"), data.get("pass"), data.get("message"))


@dataclass
class Matching:
    """The verdict entry of each triaged finding (by position in the findings), the untriaged
    findings, and the entries no finding matched (fixed, moved too far, or a rule not run)."""

    verdicts: dict[int, Entry]
    untriaged: list[Finding]
    stale: list[Entry]


def match(findings: list[Finding], entries: list[Entry]) -> Matching:
    """Pair findings with entries of the same path, cell, code and snippet, nearest line first;
    a finding whose entry has an empty verdict stays untriaged."""
    findings_by_key: dict[tuple, list[int]] = defaultdict(list)
    entries_by_key: dict[tuple, list[Entry]] = defaultdict(list)
    for index, finding in enumerate(findings):
        findings_by_key[finding.key].append(index)
    for entry in entries:
        entries_by_key[entry.key].append(entry)
    paired: dict[int, Entry] = {}
    for key, indices in findings_by_key.items():
        # Nearest line first; at the same distance, an entry recorded with the finding's message
        # (two findings can share a line: 'a' and 'b' in 'self.a, self.b = a, b').
        pairs = sorted((abs(findings[index].line - entry.line), entry.message != findings[index].message, index, entry.number, entry)
                       for index in indices for entry in entries_by_key.get(key, []))
        used_entries: set[int] = set()
        for _, _, index, number, entry in pairs:
            if index not in paired and number not in used_entries:
                paired[index] = entry
                used_entries.add(number)
    matched_numbers = {entry.number for entry in paired.values()}
    verdicts = {index: entry for index, entry in paired.items() if entry.verdict}
    untriaged = [finding for index, finding in enumerate(findings) if index not in verdicts]
    stale = [entry for entry in entries if entry.number not in matched_numbers]
    return Matching(verdicts, untriaged, stale)


def untriaged_record(finding: Finding, pass_: str) -> dict:
    """A triage line for ``finding`` with the verdict and reason left to fill in."""
    record: dict = {"repo": finding.repo, "path": finding.path}
    if finding.cell is not None:
        record["cell"] = finding.cell
    record.update(line=finding.line, code=finding.code, snippet=finding.snippet, verdict="", reason="",
                  confidence=finding.confidence, message=finding.message)
    record["pass"] = pass_
    return record
