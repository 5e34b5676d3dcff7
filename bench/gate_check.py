"""Check that the gate (leaklint/prefilter.py) never hides a finding, and measure what it skips.

    python bench/gate_check.py DIR [DIR...] [--jobs N]

Every file is linted with every rule and no gate, at the lowest confidence; each finding must come
from a rule the gate would have run for that file at that finding's confidence (low, medium,
high). Prints the violations (exit 1 if any) and, per confidence, the share of files and bytes the
gate keeps away from libcst. A rule whose ``may_report`` is wrong shows up here first; the
test-suite runs the same check on the rule examples, the fixtures and a sample of the standard
library.
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from leaklint.config import Settings
from leaklint.engine import SourceProblem, check_syntax, decode, lint_text
from leaklint.findings import Confidence
from leaklint.prefilter import may_hold_findings
from leaklint.registry import all_rules

LEVELS = (Confidence.LOW, Confidence.MEDIUM, Confidence.HIGH)


def gate_violations(text: str, path: str) -> tuple[list[str], dict[Confidence, bool]]:
    """(findings the gate would have hidden, whether the gate parses the file, per confidence)."""
    rules = list(all_rules().values())
    try:
        tree = check_syntax(text, path)
    except SourceProblem:
        return [], {level: False for level in LEVELS}
    allowed = {level: {rule.code for rule in may_hold_findings(text, tree, rules, level)} for level in LEVELS}
    outcome = lint_text(text, path, rules, Settings(select=("ALL",), min_confidence=Confidence.LOW), gate=False)
    hidden = [
        f"{path}:{f.line}:{f.column}: {f.code} ({f.confidence}) hidden by the gate at {level}"
        for f in outcome.findings
        for level in LEVELS
        if f.confidence >= level and f.code not in allowed[level]
    ]
    return hidden, {level: bool(allowed[level]) for level in LEVELS}


def _check(path: str) -> tuple[str, int, list[str], dict[Confidence, bool]]:
    data = Path(path).read_bytes()
    try:
        text = decode(data)
    except SourceProblem:
        return path, len(data), [], {level: False for level in LEVELS}
    hidden, parsed = gate_violations(text, path)
    return path, len(data), hidden, parsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directories", nargs="+", type=Path)
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()
    files = sorted(str(p) for d in args.directories for p in d.rglob("*.py") if p.is_file() and "/.wheels/" not in str(p))
    total_bytes = 0
    parsed_files = {level: 0 for level in LEVELS}
    parsed_bytes = {level: 0 for level in LEVELS}
    problems: list[str] = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for path, size, hidden, parsed in pool.map(_check, files, chunksize=4):
            total_bytes += size
            problems.extend(hidden)
            for level in LEVELS:
                parsed_files[level] += parsed[level]
                parsed_bytes[level] += size * parsed[level]
    for line in problems:
        print(line)
    print(f"{len(files)} files, {total_bytes:,} bytes; findings hidden by the gate: {len(problems)}")
    for level in LEVELS:
        print(
            f"  min-confidence {level}: libcst runs on {parsed_files[level]} files "
            f"({parsed_files[level] / max(1, len(files)):.0%}), {parsed_bytes[level] / max(1, total_bytes):.0%} of the bytes"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
