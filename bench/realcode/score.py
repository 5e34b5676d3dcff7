"""Score leaklint's precision on the real-code corpus against the triage file.

    python bench/realcode/score.py DIR [--triage bench/realcode/triage.jsonl] [--select ALL]
                                       [--min-confidence medium] [--jobs N] [--write-untriaged FILE]

Runs ``python -m leaklint --format json --no-cache --exit-zero`` on DIR (built by assemble.py;
default rules and default confidence unless told otherwise), matches every finding to its triage
entry (same path, code and stripped source line; the nearest line wins among several), and prints,
per rule and overall: findings, true, false, debatable, untriaged, precision = true / (true +
false), precision if the debatable ones were false, and findings per 10k lines; then the same per
repository, every untriaged finding, and the triage entries that no finding matched any more.

--findings FILE scores a leaklint JSON report saved earlier (--save-findings FILE saves one)
instead of linting again. --write-untriaged FILE writes the untriaged findings as triage lines
with an empty verdict, to fill in and append to the triage file.

Exit status: 0 every finding is triaged, 1 some are not, 2 bad arguments, a bad triage file or a
leaklint run that failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from corpus import count_lines, file_lines, notebook_cells
from triage import CONFIDENCES, Entry, Finding, TriageError, load_triage, match, untriaged_record

DEFAULT_TRIAGE = Path(__file__).with_name("triage.jsonl")
#: How leaklint reports a notebook cell it skipped: "syntax error at cell 11:2:22: ...".
_CELL_ERROR = re.compile(r"syntax error at cell (\d+):")


class ScoreError(Exception):
    """The run cannot be scored; the message says why in one line."""


def leaklint_command(corpus: Path, args: argparse.Namespace) -> list[str]:
    command = [sys.executable, "-m", "leaklint", "--format", "json", "--no-cache", "--exit-zero", "--quiet"]
    if args.select:
        command += ["--select", args.select]
    if args.min_confidence:
        command += ["--min-confidence", args.min_confidence]
    if args.jobs:
        command += ["--jobs", str(args.jobs)]
    return [*command, str(corpus)]


def run_leaklint(corpus: Path, args: argparse.Namespace) -> tuple[list[dict], list[tuple[str, str]]]:
    """The findings of one leaklint run on the corpus, and its (path, reason) errors: files or
    notebook cells it could not lint.

    It runs in an empty folder with an empty configuration: neither the corpus's folder names
    (which ``python -m`` would put first on the import path) nor a pyproject.toml above the
    corpus can change what is linted or how."""
    with tempfile.TemporaryDirectory(prefix="leaklint-score-") as scratch:
        config = Path(scratch) / "leaklint.toml"
        config.write_text("", encoding="utf-8")
        command = leaklint_command(corpus, args)
        command[-1:-1] = ["--config", str(config)]
        completed = subprocess.run(command, cwd=scratch, capture_output=True, text=True)
    errors, other = [], []
    for line in completed.stderr.splitlines():
        path, separator, reason = line.partition(": error: ")
        if separator:
            errors.append((path, reason))
        else:
            other.append(line)
    if completed.returncode not in (0, 2) or not completed.stdout.strip():
        last = (other or [f"{path}: {reason}" for path, reason in errors] or ["no message"])[-1]
        raise ScoreError(f"leaklint failed (exit {completed.returncode}): {last}")
    for line in other:
        print(line, file=sys.stderr)
    try:
        findings = json.loads(completed.stdout)
    except ValueError:
        raise ScoreError("leaklint's output is not JSON") from None
    return findings, errors


@dataclass
class Skipped:
    """What leaklint could not lint: whole files, or single notebook cells (a cell with a syntax
    error is skipped and the notebook's other cells are still linted)."""

    files: set[str] = field(default_factory=set)
    cells: dict[str, set[int]] = field(default_factory=dict)

    @classmethod
    def from_errors(cls, errors: list[tuple[str, str]], corpus: Path) -> Skipped:
        skipped = cls()
        for path, reason in errors:
            path = relative(path, corpus)
            cell = _CELL_ERROR.match(reason)
            if path.endswith(".ipynb") and cell:
                skipped.cells.setdefault(path, set()).add(int(cell.group(1)))
            else:
                skipped.files.add(path)
        for path in skipped.files:
            skipped.cells.pop(path, None)
        return skipped

    def lines(self, corpus: Path, repo: str | None = None) -> int:
        """The lines left out, in the whole corpus or in one repository's folder."""
        inside = lambda path: repo is None or path.split("/", 1)[0] == repo  # noqa: E731
        total = sum(file_lines(corpus / path) for path in self.files if inside(path))
        for path, numbers in self.cells.items():
            if inside(path):
                cells = notebook_cells((corpus / path).read_bytes())
                total += sum(len(cells[n - 1][1].splitlines()) for n in numbers if 1 <= n <= len(cells))
        return total

    def describe(self, corpus: Path) -> str:
        parts = []
        if self.files:
            parts.append(f"{len(self.files)} files ({', '.join(sorted(self.files))})")
        if self.cells:
            count = sum(len(numbers) for numbers in self.cells.values())
            notebooks = ", ".join(f"{path} ({len(numbers)})" for path, numbers in sorted(self.cells.items()))
            parts.append(f"{count} notebook cells with syntax errors in {len(self.cells)} notebooks: {notebooks}")
        return f"not linted, {self.lines(corpus):,} lines left out of the per-10k figures: " + "; ".join(parts)


def read_findings(path: Path) -> list[dict]:
    """A leaklint JSON report saved earlier (--save-findings)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ScoreError(f"--findings {path}: cannot read it ({error.strerror})") from None
    except ValueError as error:
        raise ScoreError(f"--findings {path}: not a leaklint JSON report ({error})") from None
    if not isinstance(raw, list):
        raise ScoreError(f"--findings {path}: not a leaklint JSON report (not a list of findings)")
    return raw


def to_findings(raw: list[dict], corpus: Path) -> list[Finding]:
    """leaklint's JSON findings with paths relative to the corpus and their stripped source line."""
    sources = SourceLines(corpus)
    findings = []
    for item in raw:
        path = relative(item["path"], corpus)
        cell = item.get("cell")
        findings.append(Finding(path, cell, item["line"], item["column"], item["code"], item["confidence"],
                                item["message"], sources.line(path, cell, item["line"])))
    return findings


def relative(path: str, corpus: Path) -> str:
    candidate = Path(path)
    try:
        return candidate.resolve().relative_to(corpus).as_posix() if candidate.is_absolute() else candidate.as_posix()
    except ValueError:
        raise ScoreError(f"leaklint reported {path}, which is outside {corpus}") from None


class SourceLines:
    """Reads each file (or notebook cell) once and returns its lines, stripped."""

    def __init__(self, corpus: Path) -> None:
        self._corpus = corpus
        self._lines: dict[tuple[str, int | None], list[str]] = {}

    def line(self, path: str, cell: int | None, number: int) -> str:
        key = (path, cell)
        if key not in self._lines:
            data = (self._corpus / path).read_bytes()
            if cell is None:
                text = data.decode("utf-8", errors="replace")
            else:
                cells = notebook_cells(data)
                text = cells[cell - 1][1] if 1 <= cell <= len(cells) else ""
            self._lines[key] = text.splitlines()
        lines = self._lines[key]
        return lines[number - 1].strip() if 1 <= number <= len(lines) else ""


def precision(true: int, false: int) -> str:
    return f"{true / (true + false):.2f}" if true + false else "-"


Judged = list[tuple[Finding, "Entry | None"]]


def table(title: str, groups: dict[str, Judged], lines: dict[str, int], overall_lines: int | None = None) -> list[str]:
    """One row per group (every key of ``lines``, with or without findings), findings per 10k of
    that group's own lines; with ``overall_lines``, a last row for everything."""
    header = (f"{title:28} {'findings':>8} {'true':>5} {'false':>5} {'debatable':>9} {'untriaged':>9} "
              f"{'precision':>9} {'if debatable false':>18} {'per 10k lines':>13}")
    rows = [header, "-" * len(header)]
    for name in sorted(lines, key=str.lower):
        rows.append(_row(name, groups.get(name, []), lines[name]))
    if overall_lines is not None:
        everything = [item for items in groups.values() for item in items]
        rows += ["-" * len(header), _row("overall", everything, overall_lines)]
    return rows


def _row(name: str, items: Judged, lines: int) -> str:
    counts = Counter(entry.verdict if entry else "untriaged" for _, entry in items)
    true, false, debatable = counts["true"], counts["false"], counts["debatable"]
    per_10k = len(items) / lines * 10_000 if lines else 0.0
    return (f"{name:28} {len(items):8} {true:5} {false:5} {debatable:9} {counts['untriaged']:9} "
            f"{precision(true, false):>9} {precision(true, false + debatable):>18} {per_10k:13.2f}")


def write_records(path: Path, records: list[dict]) -> None:
    """Write JSON lines through a temporary file, so the file is never half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    os.replace(handle.name, path)


def rules_run(select: str | None) -> set[str]:
    """The codes of the rules a run with ``--select`` (None: the default rules) reports."""
    completed = subprocess.run([sys.executable, "-m", "leaklint", "rules", "--format", "json"],
                               capture_output=True, text=True, cwd=tempfile.gettempdir())
    try:
        rules = json.loads(completed.stdout)
    except ValueError:
        raise ScoreError(f"leaklint rules failed: {completed.stderr.strip() or 'no output'}") from None
    if select is None:
        return {rule["code"] for rule in rules if rule["default_enabled"]}
    wanted = [token for token in select.replace(" ", ",").split(",") if token]
    return {rule["code"] for rule in rules if any(token == "ALL" or rule["code"].startswith(token) for token in wanted)}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Score leaklint's precision on the real-code corpus (built by assemble.py) against the triage file.",
        epilog="Exit status: 0 every finding triaged, 1 untriaged findings, 2 bad arguments, triage file or leaklint run.",
    )
    parser.add_argument("dir", metavar="DIR", type=Path, help="the corpus folder assemble.py built")
    parser.add_argument("--triage", type=Path, default=DEFAULT_TRIAGE, help="the triage file (default: %(default)s)")
    parser.add_argument("--select", metavar="CODES", help="rules to run, as leaklint's --select (e.g. ALL); default: the default rules")
    parser.add_argument("--min-confidence", choices=CONFIDENCES, help="as leaklint's --min-confidence (default: leaklint's, medium)")
    parser.add_argument("-j", "--jobs", type=int, metavar="N", help="leaklint's worker processes")
    parser.add_argument("--findings", type=Path, metavar="FILE", help="score this saved leaklint JSON report instead of running leaklint")
    parser.add_argument("--save-findings", type=Path, metavar="FILE", help="also save leaklint's JSON report here")
    parser.add_argument("--write-untriaged", type=Path, metavar="FILE", help="write the untriaged findings here as triage lines to fill in")
    parser.add_argument("--no-stale", action="store_true", help="do not list the triage entries that no finding matched")
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be 1 or more")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    corpus = args.dir.resolve()
    if not corpus.is_dir():
        print(f"score.py: {args.dir}: no such folder (build it with bench/realcode/assemble.py)", file=sys.stderr)
        return 2
    try:
        entries = load_triage(args.triage)
        started = time.monotonic()
        if args.findings:
            raw, errors = read_findings(args.findings), []
        else:
            raw, errors = run_leaklint(corpus, args)
        elapsed = time.monotonic() - started
        if args.save_findings:
            args.save_findings.write_text(json.dumps(raw, indent=1), encoding="utf-8")
        findings = to_findings(raw, corpus)
        selected = rules_run(args.select)
    except (ScoreError, TriageError) as error:
        print(f"score.py: {error}", file=sys.stderr)
        return 2
    except KeyError as error:
        print(f"score.py: a finding in leaklint's report has no {error} field", file=sys.stderr)
        return 2
    except (OSError, ValueError, TypeError) as error:
        print(f"score.py: cannot read the findings or their source lines ({type(error).__name__}: {error})", file=sys.stderr)
        return 2

    count = count_lines(corpus)
    skipped = Skipped.from_errors(errors, corpus)
    lines = count.lines - skipped.lines(corpus)
    repo_lines = {folder.name: count_lines(folder).lines - skipped.lines(corpus, repo=folder.name)
                  for folder in corpus.iterdir() if folder.is_dir() and not folder.name.startswith(".")}
    rules = args.select or "default rules"
    confidence = args.min_confidence or "medium (default)"
    source = f"{args.findings}" if args.findings else f"leaklint run, {elapsed:.0f} s"
    print(f"corpus {corpus}: {count.lines:,} lines ({count.py_lines:,} in {count.py_files:,} .py files, "
          f"{count.notebook_lines:,} in code cells of {count.notebooks:,} notebooks)")
    if errors:
        print(skipped.describe(corpus))
    print(f"rules: {rules}; min confidence: {confidence}; {source}; triage: {args.triage} ({len(entries)} entries)")
    print()

    matching = match(findings, entries)
    judged = [(finding, matching.verdicts.get(index)) for index, finding in enumerate(findings)]
    by_rule: dict[str, list] = defaultdict(list)
    by_repo: dict[str, list] = defaultdict(list)
    for finding, entry in judged:
        by_rule[finding.code].append((finding, entry))
        by_repo[finding.repo].append((finding, entry))
    print("\n".join(table("rule", by_rule, {code: lines for code in selected | set(by_rule)}, overall_lines=lines)))
    print()
    print("\n".join(table("repository", by_repo, {**repo_lines, **{repo: 0 for repo in by_repo if repo not in repo_lines}})))

    if matching.untriaged:
        print(f"\nuntriaged findings ({len(matching.untriaged)}):")
        for finding in matching.untriaged:
            print(f"  {finding.location()}: {finding.code} [{finding.confidence}] {finding.message}")
    stale = [entry for entry in matching.stale if entry.code in selected and _shown(entry, args.min_confidence)]
    if stale and not args.no_stale:
        verdicts = Counter(entry.verdict or "untriaged" for entry in stale)
        summary = ", ".join(f"{verdicts[v]} {v}" for v in (*("true", "false", "debatable"), "untriaged") if verdicts[v])
        print(f"\ntriage entries that no finding matched ({len(stale)}: {summary}; fixed, moved, or the code changed):")
        for entry in stale:
            print(f"  {entry.location()}: {entry.code} was {entry.verdict or 'untriaged'}: {entry.snippet}")
    if args.write_untriaged:
        pass_ = "default" if args.select is None else "select-all" if args.select == "ALL" else f"select {args.select}"
        try:
            write_records(args.write_untriaged, [untriaged_record(f, pass_) for f in matching.untriaged])
        except OSError as error:
            print(f"score.py: --write-untriaged {args.write_untriaged}: cannot write it ({error.strerror})", file=sys.stderr)
            return 2
        print(f"\nwrote {len(matching.untriaged)} untriaged findings to {args.write_untriaged}")
    return 1 if matching.untriaged else 0


def _shown(entry: Entry, min_confidence: str | None) -> bool:
    """Whether a run at ``min_confidence`` would show an entry's finding (unknown: yes)."""
    if entry.confidence is None:
        return True
    return CONFIDENCES.index(entry.confidence) >= CONFIDENCES.index(min_confidence or "medium")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("score.py: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:  # the output was piped into head, say: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
