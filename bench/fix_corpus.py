"""Audit ``--fix --unsafe-fixes`` on real code: every fix compiles, a second fix changes nothing,
and no token outside an edited span moves or changes.

    python bench/fix_corpus.py DIR [DIR ...]     # e.g. the corpora of bench/realcode and bench/corpus.sh

Nothing is written: fixes are computed in memory exactly as ``--fix`` computes them
(``leaklint.fixes.fixer.fix_text``), then each pass is replayed and checked. The token check tokenizes
the text before and after every pass and requires each token that lies wholly outside that
pass's edits to appear, unchanged, at its shifted offset — so an edit cannot silently swallow or
re-tokenize its neighbours (an unbalanced quote or bracket would). Prints per-rule counts and
every violation; exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import ast
import io
import sys
import time
import tokenize
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leaklint.config import Settings  # noqa: E402
from leaklint.engine import SourceProblem, default_jobs, map_in_workers, read_source  # noqa: E402
from leaklint.findings import Confidence, TextEdit  # noqa: E402
from leaklint.fixes.apply import line_starts  # noqa: E402
from leaklint.fixes.fixer import fix_text  # noqa: E402
from leaklint.registry import all_rules  # noqa: E402

#: Low confidence by default: the audit wants as many fixes exercised as possible.
SETTINGS = Settings(min_confidence=Confidence.LOW)


def tokens_by_offset(text: str) -> list[tuple[int, int, int, str]] | None:
    """``(start, end, type, string)`` for every token, or None if the text does not tokenize."""
    starts = line_starts(text)
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                continue  # layout tokens legitimately change when a block is wrapped
            start = starts[token.start[0] - 1] + token.start[1]
            end = starts[token.end[0] - 1] + token.end[1]
            found.append((start, end, token.type, token.string))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return found


def untouched_tokens_survive(before: str, edits: tuple[TextEdit, ...], after: str) -> bool:
    old = tokens_by_offset(before)
    new = tokens_by_offset(after)
    if old is None or new is None:
        return False
    new_at = {(start, kind, string) for start, _, kind, string in new}
    for start, end, kind, string in old:
        shift = 0
        inside = False
        for edit in edits:
            if edit.end <= start and not (edit.start == edit.end == start):
                shift += len(edit.replacement) - (edit.end - edit.start)
            elif edit.start == edit.end == start:
                shift += len(edit.replacement)  # an insertion right before the token
            elif edit.start < end and start < edit.end:
                inside = True
        if inside:
            continue
        if "\n" in string or "\r" in string:
            continue  # a multi-line string keeps its text; its start offset is what we check
        if (start + shift, kind, string) not in new_at:
            return False
    return True


def audit(path: str) -> tuple[str, list[str], Counter, bool]:
    rules = list(all_rules().values())
    try:
        _, text, _ = read_source(path, SETTINGS)
    except SourceProblem:
        return path, [], Counter(), False
    outcome = fix_text(text, path, rules, SETTINGS, unsafe=True)
    problems = [f"{e.describe()}" for e in outcome.errors if e.kind.value == "internal-error"]
    applied = Counter(f.code for f in outcome.applied)
    if not outcome.changed:
        return path, problems, applied, False
    try:
        ast.parse(outcome.fixed)
    except SyntaxError as error:
        problems.append(f"{path}: fixed text does not parse: {error}")
    current = text
    for number, edits in enumerate(outcome.passes, start=1):
        replayed = _apply(current, edits)
        if not untouched_tokens_survive(current, edits, replayed):
            problems.append(f"{path}: pass {number} changed tokens outside its edits")
        current = replayed
    if current != outcome.fixed:
        problems.append(f"{path}: replaying the passes does not give the fixed text")
    again = fix_text(outcome.fixed, path, rules, SETTINGS, unsafe=True)
    if again.changed:
        problems.append(f"{path}: a second fix changes the file again ({', '.join(f.code for f in again.applied)})")
    return path, problems, applied, True


def _apply(text: str, edits: tuple[TextEdit, ...]) -> str:
    pieces, cursor = [], 0
    for edit in edits:
        pieces.append(text[cursor : edit.start])
        pieces.append(edit.replacement)
        cursor = edit.end
    pieces.append(text[cursor:])
    return "".join(pieces)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", type=Path, help="folders of Python files (bench/realcode/assemble.py, bench/corpus.sh)")
    parser.add_argument("--jobs", type=int, default=default_jobs())
    args = parser.parse_args()
    files = sorted(str(p) for d in args.dirs for p in d.rglob("*.py") if "wheels" not in p.parts)
    if not files:
        print("no Python files found in " + ", ".join(map(str, args.dirs)), file=sys.stderr)
        return 2
    started = time.perf_counter()
    results = map_in_workers(audit, files, args.jobs)
    elapsed = time.perf_counter() - started
    applied: Counter = Counter()
    problems = []
    changed = 0
    for _, file_problems, file_applied, was_changed in results:
        applied.update(file_applied)
        problems.extend(file_problems)
        changed += was_changed
    print(f"files: {len(files)}   changed by --fix --unsafe-fixes: {changed}   time: {elapsed:.0f} s")
    for code, count in sorted(applied.items()):
        print(f"  {code}: {count} fixes applied")
    print(f"problems: {len(problems)}")
    for problem in problems:
        print(f"  {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
