"""Check that the gate (leaklint/gate.py) never changes what a lint reports, and measure what it
keeps away from libcst and the analysis.

    python bench/gate_check.py DIR [DIR...] [--rules all|default] [--jobs N]

Every file (a notebook: the program its code cells make) is linted with no gate at all, at the
lowest confidence; then with the gate, at each confidence (low, medium, high). The gated run must report exactly the ungated findings at or
above its confidence, with the same messages and fixes. Prints every difference (exit 1 if any)
and, per confidence, the share of files and bytes the gate lets through to libcst. The test-suite runs the same check on the rule examples and the fixtures.
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from leaklint.config import Settings
from leaklint.discovery import is_notebook_path
from leaklint.engine import SourceProblem, check_syntax, decode
from leaklint.findings import Confidence
from leaklint.gate import read_contents, rules_for
from leaklint.notebook import Notebook, NotebookError
from leaklint.registry import all_rules
from leaklint.testing import GATE_LEVELS as LEVELS, gate_differences


@dataclass
class FileCheck:
    path: str
    size: int
    #: Differences between the gated and the ungated run.
    differences: list[str] = field(default_factory=list)
    #: Bytes the gate lets through to libcst, per confidence (0: no rule can report in the file).
    parsed: dict[Confidence, int] = field(default_factory=dict)


def selected_rules(which: str) -> list:
    rules = all_rules()
    if which == "all":
        return list(rules.values())
    return [rules[code] for code in sorted(Settings().enabled_codes(rules))]


def check_file(text: str, path: str, rules: list) -> tuple[list[str], dict[Confidence, int]]:
    """(differences between gated and ungated runs, bytes libcst parses per confidence)."""
    try:
        tree = check_syntax(text, path)
    except SourceProblem:
        return [], {level: 0 for level in LEVELS}
    differences = gate_differences(text, path, rules)
    contents = read_contents(text, tree)
    parsed = {level: len(text) if rules_for(contents, rules, level) else 0 for level in LEVELS}
    return differences, parsed


def _check(job: tuple[str, str]) -> FileCheck:
    path, which = job
    data = Path(path).read_bytes()
    result = FileCheck(path, len(data), parsed={level: 0 for level in LEVELS})
    try:
        text = decode(data)
    except SourceProblem:
        return result
    if is_notebook_path(path):
        try:
            text = Notebook.parse(text).program().text  # the program its code cells make, as leaklint lints it
        except NotebookError:
            return result
        result.size = len(text)  # its code, not its outputs
    result.differences, result.parsed = check_file(text, path, selected_rules(which))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directories", nargs="+", type=Path)
    parser.add_argument("--rules", choices=("all", "default"), default="all", help="every rule, or those a plain `leaklint DIR` runs")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()
    files = sorted(
        str(p) for d in args.directories for pattern in ("*.py", "*.ipynb") for p in d.rglob(pattern) if p.is_file() and "/.wheels/" not in str(p)
    )
    total_bytes = 0
    parsed_files = {level: 0 for level in LEVELS}
    parsed_bytes = {level: 0 for level in LEVELS}
    problems: list[str] = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for result in pool.map(_check, [(path, args.rules) for path in files], chunksize=4):
            total_bytes += result.size
            problems.extend(result.differences)
            for level in LEVELS:
                parsed_files[level] += result.parsed[level] > 0
                parsed_bytes[level] += result.parsed[level]
    for line in problems:
        print(line)
    print(f"{len(files)} files, {total_bytes:,} bytes, {args.rules} rules; differences made by the gate: {len(problems)}")
    files_, bytes_ = max(1, len(files)), max(1, total_bytes)
    for level in LEVELS:
        print(
            f"  min-confidence {level}: libcst parses {parsed_files[level]} files "
            f"({parsed_files[level] / files_:.0%}, {parsed_bytes[level] / bytes_:.0%} of the bytes)"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
