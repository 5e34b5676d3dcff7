"""Score ``leaklint run`` on the runnable leak benchmark (bench/runnable/cases).

Every case is a buggy/fixed pair of small training, evaluation or sampling scripts rebuilt from a
bench/leaks case so that it runs in seconds on the CPU. Each file is run under
``python -m leaklint run --format json [options from its Run: line] FILE`` in a subprocess, and:

- the buggy version should grow and **name the marked line**: a finding at a marked line (same
  file) with status "confirmed", or a growing tensor site / unexplained-growth entry at that line;
- the fixed version should not have any finding confirmed (and ideally not grow).

It prints one line per case and a summary; it measures leaklint and never fails a build: exit 0
after scoring, 2 when a case is malformed or an argument is wrong (see README.md).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_TIMEOUT = 180


def _load_leakcases():
    """bench/leaks/leakcases.py reads headers and markers the same way for both benchmarks."""
    name = "bench_leaks_leakcases"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / "leaks" / "leakcases.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


leakcases = _load_leakcases()


def run_options(path: Path) -> list[str]:
    """The ``leaklint run`` options of a case: its docstring's ``Run:`` line, split on spaces."""
    import ast

    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    for line in docstring.splitlines():
        name, sep, value = line.strip().partition(":")
        if sep and name == "Run":
            return value.split()
    return []


def _same_file(a: str, b: str, cwd: str) -> bool:
    return os.path.realpath(os.path.join(cwd, a)) == os.path.realpath(os.path.join(cwd, b))


def named_lines(document: dict, script: str, cwd: str = ".") -> set[int]:
    """Lines of ``script`` that a ``leaklint.run/1`` document names as growing: confirmed findings,
    growing tensor sites and unexplained-growth entries at a line of that file."""
    lines: set[int] = set()
    for finding in document.get("findings", ()):
        if finding.get("status") == "confirmed" and _same_file(finding.get("path", ""), script, cwd):
            lines.add(int(finding["line"]))
    for entry in [*document.get("sites", ()), *document.get("unexplained", ())]:
        where, _, line = str(entry.get("where", "")).rpartition(":")
        if where and line.isdigit() and _same_file(where, script, cwd):
            lines.add(int(line))
    return lines


def parse_document(stdout: str) -> dict:
    """The ``leaklint.run/1`` document at the end of ``stdout``. The script's own prints share
    stdout with it (leaklint run runs the script in its own process), so the document is found by
    its opening lines. Raises ValueError when there is none."""
    start = stdout.rfind('{\n  "schema": "leaklint.run/1"')
    if start < 0:
        raise ValueError("no leaklint.run/1 document in the output")
    return json.loads(stdout[start:])


def confirmed_findings(document: dict) -> list[dict]:
    return [f for f in document.get("findings", ()) if f.get("status") == "confirmed"]


@dataclass
class Outcome:
    """One run of one file."""

    path: str
    rc: int | None = None
    seconds: float = 0.0
    error: str | None = None
    grows: bool = False
    tensor_growth: float | None = None
    host_growth: float | None = None
    markers: list[int] = field(default_factory=list)
    named: list[int] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)  # "line:code" of confirmed findings
    sites: list[str] = field(default_factory=list)  # "where bytes/step" of the top sites

    @property
    def right_line(self) -> bool:
        return bool(set(self.markers) & set(self.named))


def judge(document: dict, script: str, markers: list[int], cwd: str = ".") -> dict:
    """What a document says about one file: grows, the marked lines it names, confirmed findings."""
    named = named_lines(document, script, cwd)
    return {
        "grows": bool(document.get("grows")),
        "tensor_growth": (document.get("tensor") or {}).get("growth_per_step"),
        "host_growth": (document.get("host") or {}).get("growth_per_step"),
        "named": sorted(named),
        "right_line": bool(named & set(markers)),
        "confirmed": [f"{f['line']}:{f['code']}" for f in confirmed_findings(document)],
    }


def run_file(path: Path, markers: list[int], timeout: float) -> Outcome:
    outcome = Outcome(path=str(path.relative_to(REPO)), markers=markers)
    command = [sys.executable, "-m", "leaklint", "run", "--format", "json", *run_options(path), str(path)]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        outcome.seconds = time.perf_counter() - start
        outcome.error = f"timed out after {timeout:.0f}s"
        return outcome
    outcome.seconds = time.perf_counter() - start
    outcome.rc = done.returncode
    try:
        document = parse_document(done.stdout)
    except ValueError:
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()
        outcome.error = f"exit {done.returncode}: {tail[-1] if tail else 'no output'}"
        return outcome
    verdict = judge(document, str(path), markers, str(REPO))
    outcome.grows = verdict["grows"]
    outcome.tensor_growth, outcome.host_growth = verdict["tensor_growth"], verdict["host_growth"]
    outcome.named, outcome.confirmed = verdict["named"], verdict["confirmed"]
    outcome.sites = [f"{s['where']} {s['bytes_per_step']:.0f}B" for s in document.get("sites", ())[:3]]
    return outcome


def discover(root: Path, only: str | None) -> tuple[list[tuple[str, Path, Path, list[int]]], list[str]]:
    """(case, buggy, fixed, marked lines of buggy) per case, and the problems found."""
    cases, problems = [], []
    for folder in sorted(p for p in (root / "cases").glob("*") if p.is_dir()):
        if only and only not in folder.name:
            continue
        buggy, fixed = folder / "buggy.py", folder / "fixed.py"
        if not buggy.is_file() or not fixed.is_file():
            problems.append(f"{folder}: needs buggy.py and fixed.py")
            continue
        items = {}
        for path in (buggy, fixed):
            item, issues = leakcases.load(path)
            problems += [f"{path}: {issue}" for issue in issues]
            items[path.stem] = item
        cases.append((folder.name, buggy, fixed, [m.line for m in items["buggy"].markers]))
    return cases, problems


def _growth(outcome: Outcome) -> str:
    def size(value):
        return "-" if value is None else f"{value / 1024:.1f}K"
    return f"t{size(outcome.tensor_growth)}/h{size(outcome.host_growth)}"


def describe(case: str, buggy: Outcome, fixed: Outcome) -> str:
    def state(outcome: Outcome, role: str) -> str:
        if outcome.error:
            return f"{role} ERROR ({outcome.error})"
        if role == "buggy":
            verdict = "RIGHT-LINE" if buggy.grows and buggy.right_line else ("grew/wrong-line" if outcome.grows else "flat")
            return f"buggy {verdict} {_growth(outcome)} named={outcome.named} marked={outcome.markers}"
        verdict = "CONFIRMED" if outcome.confirmed else ("grew" if outcome.grows else "flat")
        return f"fixed {verdict} {_growth(outcome)}" + (f" confirmed={outcome.confirmed}" if outcome.confirmed else "")
    return f"{case:58s} {state(buggy, 'buggy')} | {state(fixed, 'fixed')} | {buggy.seconds + fixed.seconds:.1f}s"


def summarize(results: list[dict]) -> dict:
    total = len(results)
    right = [r["case"] for r in results if not r["buggy"]["error"] and r["buggy"]["grows"] and r["buggy_right_line"]]
    wrong = [r["case"] for r in results if not r["buggy"]["error"] and r["buggy"]["grows"] and not r["buggy_right_line"]]
    flat = [r["case"] for r in results if not r["buggy"]["error"] and not r["buggy"]["grows"]]
    errors = [f"{r['case']}/{role}" for r in results for role in ("buggy", "fixed") if r[role]["error"]]
    fixed_confirmed = [r["case"] for r in results if not r["fixed"]["error"] and r["fixed"]["confirmed"]]
    fixed_grew = [r["case"] for r in results if not r["fixed"]["error"] and r["fixed"]["grows"]]
    return {
        "cases": total, "buggy_right_line": right, "buggy_wrong_line": wrong, "buggy_flat": flat,
        "errors": errors, "fixed_confirmed": fixed_confirmed, "fixed_grew": fixed_grew,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=HERE, help="benchmark folder (holds cases/)")
    parser.add_argument("--case", help="only cases whose name contains this")
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time (default 1)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per run")
    parser.add_argument("--json", type=Path, help="also write every outcome and the summary here")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    cases, problems = discover(args.root, args.case)
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        return 2
    if not cases:
        print("no case matches", file=sys.stderr)
        return 2
    started = time.perf_counter()
    tasks = [(case, role, path, markers if role == "buggy" else []) for case, buggy, fixed, markers in cases
             for role, path in (("buggy", buggy), ("fixed", fixed))]
    results = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_file, path, markers, args.timeout) for _, _, path, markers in tasks]
        for index, (case, buggy, fixed, markers) in enumerate(cases):
            b, f = futures[2 * index].result(), futures[2 * index + 1].result()
            print(describe(case, b, f), flush=True)
            results.append({"case": case, "buggy": asdict(b), "fixed": asdict(f), "buggy_right_line": b.right_line})
    summary = summarize(results)
    n = summary["cases"]

    def share(items):
        return f"{len(items)}/{n} ({100 * len(items) / n:.0f}%)"
    elapsed = time.perf_counter() - started
    print()
    print(f"buggy confirmed with the right line: {share(summary['buggy_right_line'])}")
    print(f"buggy grew but the marked line not named: {share(summary['buggy_wrong_line'])} {' '.join(summary['buggy_wrong_line'])}")
    print(f"buggy flat: {share(summary['buggy_flat'])} {' '.join(summary['buggy_flat'])}")
    print(f"fixed with a confirmed finding (must be 0): {len(summary['fixed_confirmed'])} {' '.join(summary['fixed_confirmed'])}")
    print(f"fixed that grew: {len(summary['fixed_grew'])} {' '.join(summary['fixed_grew'])}")
    if summary["errors"]:
        print(f"runs that failed: {len(summary['errors'])} {' '.join(summary['errors'])}")
    print(f"total time: {elapsed:.0f}s ({args.jobs} job(s))")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "results": results, "seconds": elapsed}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
