"""Score leaklint on the real-leak benchmark: recall on marked lines, precision on every finding.

    python bench/leaks/score.py [--root bench/leaks] [--min-confidence medium] [--select ...]
                                [--jobs N] [--json FILE]
    python bench/leaks/score.py --inventory     # the README's tables of cases, no leaklint run
    python bench/leaks/score.py --update-readme # rewrite those tables in bench/leaks/README.md

Runs `python -m leaklint --format json --no-cache --exit-zero` once over every buggy, fixed and
negative file (default rules and confidence unless told), then:

- a marked line is found when leaklint reports a finding on that very line (any rule);
- recall = found marked lines / marked lines, overall, per expected code (the marker's LLxxx or
  new:<family>) and per style;
- precision = findings on marked lines / all findings; a finding in a fixed file or a negative is a
  false positive, and so is one on an unmarked line of a buggy file; per rule, by the finding's code;
- every miss and every false positive is listed, and so is every fixed file with a finding.

Exit status: 0 after scoring (it is a benchmark: misses are numbers, not failures); 2 when a case is
malformed (no header, no marker in a buggy file, a marker in a fixed file or a negative...), before
anything runs; 3 when leaklint itself fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from leakcases import STYLES, CaseFile, load_all  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


@dataclass(frozen=True)
class Finding:
    path: Path
    line: int
    code: str
    confidence: str
    message: str


@dataclass
class Tally:
    """Found / total, with a ratio that reads '-' when there is nothing to count."""

    hits: int = 0
    total: int = 0

    def add(self, hit: bool) -> None:
        self.hits += int(hit)
        self.total += 1

    @property
    def ratio(self) -> float | None:
        return self.hits / self.total if self.total else None

    def show(self) -> str:
        return f"{self.hits}/{self.total} = {self.ratio:.1%}" if self.total else "-"


@dataclass
class Score:
    recall: Tally = field(default_factory=Tally)
    recall_by_code: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    recall_by_style: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    expected_rule: Tally = field(default_factory=Tally)  # LLxxx markers found by that very rule
    precision: Tally = field(default_factory=Tally)
    precision_by_rule: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    misses: list[tuple[CaseFile, int, str, str]] = field(default_factory=list)
    false_positives: list[tuple[CaseFile, Finding]] = field(default_factory=list)
    fixed_with_findings: dict[Path, int] = field(default_factory=dict)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python bench/leaks/score.py",
        description="Score leaklint on the real-leak benchmark (bench/leaks): recall per marked line, precision per finding.",
    )
    parser.add_argument("--root", type=Path, default=HERE, help="the benchmark folder (default: %(default)s)")
    parser.add_argument("--min-confidence", choices=("low", "medium", "high"), help="passed to leaklint (default: leaklint's own)")
    parser.add_argument("--select", help="rules passed to leaklint --select (default: leaklint's default rules)")
    parser.add_argument("--jobs", type=int, default=1, help="leaklint worker processes (default: %(default)s)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the numbers, misses and false positives to FILE")
    parser.add_argument("--inventory", action="store_true", help="print the markdown tables of cases by style and kind, run nothing")
    parser.add_argument("--update-readme", action="store_true",
                        help="rewrite the tables between the inventory markers of ROOT/README.md, run nothing")
    return parser.parse_args(argv)


def run_leaklint(files: list[Path], args: argparse.Namespace) -> list[Finding]:
    """One leaklint run over every file; raises RuntimeError with leaklint's own message if it fails."""
    command = [sys.executable, "-m", "leaklint", "--format", "json", "--no-cache", "--exit-zero", "--jobs", str(args.jobs)]
    if args.min_confidence:
        command += ["--min-confidence", args.min_confidence]
    if args.select:
        command += ["--select", args.select]
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        command += ["--output-file", str(report), "--", *map(str, files)]
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
        if done.returncode != 0 or not report.is_file():
            detail = (done.stderr.strip() or done.stdout.strip() or f"exit status {done.returncode}").splitlines()
            raise RuntimeError(f"leaklint failed (exit {done.returncode}): {' | '.join(detail[-5:])}")
        raw = json.loads(report.read_text(encoding="utf-8") or "[]")
    return [
        Finding(
            path=(REPO / entry["path"]).resolve(),
            line=int(entry["line"]),
            code=entry["code"],
            confidence=entry.get("confidence", ""),
            message=entry.get("message", ""),
        )
        for entry in raw
    ]


def score(items: list[CaseFile], findings: list[Finding]) -> Score:
    result = Score()
    by_file: dict[Path, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_file[finding.path].append(finding)
    for item in items:
        found_here = by_file.get(item.path.resolve(), [])
        lines_with_findings = {finding.line for finding in found_here}
        codes_by_line: dict[int, set[str]] = defaultdict(set)
        for finding in found_here:
            codes_by_line[finding.line].add(finding.code)
        marked = {marker.line for marker in item.markers}
        for marker in item.markers:
            hit = marker.line in lines_with_findings
            result.recall.add(hit)
            result.recall_by_code[marker.code].add(hit)
            result.recall_by_style[item.style].add(hit)
            if marker.code.startswith("LL"):
                result.expected_rule.add(marker.code in codes_by_line[marker.line])
            if not hit:
                result.misses.append((item, marker.line, marker.code, item.source_line(marker.line)))
        for finding in sorted(found_here, key=lambda f: (f.line, f.code)):
            true_positive = item.role == "buggy" and finding.line in marked
            result.precision.add(true_positive)
            result.precision_by_rule[finding.code].add(true_positive)
            if not true_positive:
                result.false_positives.append((item, finding))
        if item.role == "fixed" and found_here:
            result.fixed_with_findings[item.path] = len(found_here)
    return result


def relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def print_report(items: list[CaseFile], result: Score, args: argparse.Namespace) -> None:
    buggy = [item for item in items if item.role == "buggy"]
    fixed = [item for item in items if item.role == "fixed"]
    negatives = [item for item in items if item.role == "negative"]
    settings = f"rules: {args.select or 'default'}, min confidence: {args.min_confidence or 'leaklint default'}"
    print(f"leak benchmark: {len(buggy)} cases ({len(fixed)} with a fixed version), {len(negatives)} negatives, "
          f"{result.recall.total} marked lines; {settings}")
    print()
    print(f"recall (marked lines with a finding): {result.recall.show()}")
    print(f"  found by the rule the marker names (LLxxx markers only): {result.expected_rule.show()}")
    print(f"precision (findings on marked lines / all findings): {result.precision.show()}")
    print(f"fixed versions with no finding: {len(fixed) - len(result.fixed_with_findings)}/{len(fixed)}")
    print()
    _print_table("recall per expected code", result.recall_by_code)
    _print_table("recall per style", {style: result.recall_by_style[style] for style in STYLES if style in result.recall_by_style})
    _print_table("precision per rule (by the finding's code)", result.precision_by_rule)
    print(f"fixed files with findings ({len(result.fixed_with_findings)}):")
    for path, count in sorted(result.fixed_with_findings.items()):
        print(f"  {relative(path)}: {count} finding{'s' if count != 1 else ''}")
    print()
    print(f"misses ({len(result.misses)}):")
    for item, line, code, source in sorted(result.misses, key=lambda m: (m[0].case, m[1])):
        print(f"  {item.case}:{line}  [{code}]  {source}")
    print()
    print(f"false positives ({len(result.false_positives)}):")
    for item, finding in sorted(result.false_positives, key=lambda fp: (fp[0].case, fp[0].role, fp[1].line)):
        print(f"  {item.case}/{item.role}:{finding.line}  {finding.code} ({finding.confidence})  {item.source_line(finding.line)}")


def _print_table(title: str, rows: dict[str, Tally]) -> None:
    print(f"{title}:")
    width = max((len(name) for name in rows), default=0)
    for name in sorted(rows):
        print(f"  {name:<{width}}  {rows[name].show()}")
    print()


def as_json(items: list[CaseFile], result: Score, args: argparse.Namespace) -> dict:
    def tally(t: Tally) -> dict:
        return {"found": t.hits, "total": t.total, "ratio": t.ratio}

    return {
        "settings": {"select": args.select, "min_confidence": args.min_confidence},
        "counts": {
            "cases": sum(item.role == "buggy" for item in items),
            "fixed": sum(item.role == "fixed" for item in items),
            "negatives": sum(item.role == "negative" for item in items),
            "marked_lines": result.recall.total,
        },
        "recall": tally(result.recall),
        "found_by_expected_rule": tally(result.expected_rule),
        "recall_by_code": {code: tally(t) for code, t in sorted(result.recall_by_code.items())},
        "recall_by_style": {style: tally(t) for style, t in sorted(result.recall_by_style.items())},
        "precision": tally(result.precision),
        "precision_by_rule": {code: tally(t) for code, t in sorted(result.precision_by_rule.items())},
        "fixed_with_findings": {relative(path): count for path, count in sorted(result.fixed_with_findings.items())},
        "misses": [
            {"case": item.case, "file": relative(item.path), "line": line, "marker": code, "source": source}
            for item, line, code, source in result.misses
        ],
        "false_positives": [
            {"case": item.case, "role": item.role, "file": relative(item.path), "line": f.line, "code": f.code,
             "confidence": f.confidence, "message": f.message}
            for item, f in result.false_positives
        ],
    }


def inventory(items: list[CaseFile]) -> str:
    """Markdown: cases per style (with markers per expected code), then one row per case and negative."""
    buggy = [item for item in items if item.role == "buggy"]
    fixed_cases = {item.case for item in items if item.role == "fixed"}
    negatives = [item for item in items if item.role == "negative"]
    codes = sorted({marker.code for item in buggy for marker in item.markers})
    out = ["| style | cases | with fixed.py | negatives | marked lines |", "| --- | ---: | ---: | ---: | ---: |"]
    for style in STYLES:
        mine = [item for item in buggy if item.style == style]
        negs = [item for item in negatives if item.style == style]
        if mine or negs:
            out.append(f"| {style} | {len(mine)} | {sum(i.case in fixed_cases for i in mine)} | {len(negs)} | "
                       f"{sum(len(i.markers) for i in mine)} |")
    out.append(f"| **all** | {len(buggy)} | {sum(i.case in fixed_cases for i in buggy)} | {len(negatives)} | "
               f"{sum(len(i.markers) for i in buggy)} |")
    out += ["", "Marked lines by style and expected code:", ""]
    out.append("| style | " + " | ".join(codes) + " |")
    out.append("| --- |" + " ---: |" * len(codes))
    for style in STYLES:
        counts = Counter(marker.code for item in buggy if item.style == style for marker in item.markers)
        if counts:
            out.append(f"| {style} | " + " | ".join(str(counts.get(code, "")) for code in codes) + " |")
    out += ["", "| case | style | kind | markers | fixed |", "| --- | --- | --- | --- | --- |"]
    for item in sorted(buggy, key=lambda i: (STYLES.index(i.style) if i.style in STYLES else 99, i.case)):
        marks = ", ".join(sorted({marker.code for marker in item.markers}))
        out.append(f"| {item.case} | {item.style} | {item.kind} | {marks} | {'yes' if item.case in fixed_cases else 'no'} |")
    out += ["", "| negative | style | resembles |", "| --- | --- | --- |"]
    for item in sorted(negatives, key=lambda i: (STYLES.index(i.style) if i.style in STYLES else 99, i.case)):
        out.append(f"| {item.case} | {item.style} | {item.kind.removeprefix('negative:').strip()} |")
    return "\n".join(out)


INVENTORY_START = "<!-- inventory:start (generated by `python bench/leaks/score.py --update-readme`) -->"
INVENTORY_END = "<!-- inventory:end -->"


def update_readme(readme: Path, tables: str) -> int:
    """Replace the generated tables of the README; 2 with a one-line message when the markers are missing."""
    try:
        text = readme.read_text(encoding="utf-8")
    except OSError as error:
        print(f"score.py: {readme}: cannot be read ({error.strerror})", file=sys.stderr)
        return 2
    head, start, rest = text.partition(INVENTORY_START)
    _, end, tail = rest.partition(INVENTORY_END)
    if not start or not end:
        print(f"score.py: {readme}: no inventory markers ({INVENTORY_START} ... {INVENTORY_END})", file=sys.stderr)
        return 2
    write_atomically(readme, f"{head}{INVENTORY_START}\n{tables}\n{INVENTORY_END}{tail}")
    print(f"{readme}: inventory updated")
    return 0


def write_atomically(path: Path, text: str) -> None:
    """Write through a temporary file in the same folder, so a failed run never leaves half a file."""
    scratch = path.with_name(f".{path.name}.tmp")
    scratch.write_text(text, encoding="utf-8")
    scratch.replace(path)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.jobs < 1:
        print("score.py: --jobs must be at least 1", file=sys.stderr)
        return 2
    root = args.root.resolve()
    if not (root / "cases").is_dir():
        print(f"score.py: {args.root}: no cases/ folder here (pass --root bench/leaks)", file=sys.stderr)
        return 2
    items, problems = load_all(root)
    if problems:
        for problem in problems:
            print(f"malformed case: {problem}", file=sys.stderr)
        print(f"score.py: {len(problems)} problem(s) in the cases; nothing was scored", file=sys.stderr)
        return 2
    if args.inventory:
        print(inventory(items))
        return 0
    if args.update_readme:
        return update_readme(root / "README.md", inventory(items))
    try:
        findings = run_leaklint([item.path for item in items], args)
    except (RuntimeError, OSError, ValueError, KeyError) as error:
        print(f"score.py: {error}", file=sys.stderr)
        return 3
    result = score(items, findings)
    print_report(items, result, args)
    if args.json:
        write_atomically(args.json, json.dumps(as_json(items, result, args), indent=2) + "\n")
    return 0


def run() -> int:
    """main() for the command line: a closed pipe or Ctrl-C ends the run quietly, without a traceback."""
    try:
        return main()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("score.py: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(run())
