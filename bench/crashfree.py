"""Lint large bodies of real code and prove leaklint never crashes on them.

    python bench/crashfree.py [--no-stdlib] [--no-torch] [--corpus DIR] [--jobs N] [PATHS...]

Lints, with every rule at every confidence and no cache, the standard library of the running
interpreter, the installed ``torch`` package's own sources (found without importing torch, when it
is installed), the benchmark corpus (``bench/corpus.sh DIR``, when given) and any PATHS. Checks:

* zero internal errors (a crash of the analysis or of a rule is reported as one);
* leaklint calls a file unparsable (syntax or decoding error) exactly when ``ast.parse`` rejects it.
  Valid files that leaklint refuses on purpose are listed apart: too deeply nested
  (``MAX_NESTING_DEPTH`` in leaklint/engine.py) or valid Python that libcst cannot parse
  (``unsupported-syntax``, e.g. ``(x): int = 1``).

Exits 1 when a check fails. tests/engine/test_crashfree.py runs the same checks on a sample, in CI.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import sys
import sysconfig
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from leaklint.config import Settings
from leaklint.engine import default_jobs, lint_paths
from leaklint.findings import Confidence, ErrorKind, FileError
from leaklint.registry import all_rules

#: Kinds that mean "this is not valid Python" to leaklint.
UNPARSABLE = frozenset({ErrorKind.SYNTAX, ErrorKind.DECODE})


@dataclass
class Report:
    """The outcome of one body of code."""

    name: str
    files: int = 0
    seconds: float = 0.0
    findings: int = 0
    errors: Counter = field(default_factory=Counter)
    internal: list[FileError] = field(default_factory=list)
    #: Unparsable to leaklint but fine for ast.parse, and the reverse.
    only_leaklint: list[str] = field(default_factory=list)
    only_ast: list[str] = field(default_factory=list)
    too_complex: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.internal or self.only_leaklint or self.only_ast)


def stdlib_files() -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    return sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts and "dist-packages" not in p.parts)


def torch_files() -> list[Path]:
    """The installed torch package's sources, located without importing it."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return []
    return sorted(p for location in spec.submodule_search_locations for p in Path(location).rglob("*.py"))


def ast_rejects(path: Path) -> bool:
    """Python's verdict: ``ast.parse`` of the bytes (it applies the coding cookie itself)."""
    try:
        ast.parse(path.read_bytes(), str(path))
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return True
    except (RecursionError, MemoryError):
        return False  # too deep for this interpreter's parser: not a syntax verdict
    return False


def check(name: str, files: Sequence[Path], *, jobs: int) -> Report:
    """Lint ``files`` and compare every parse verdict with ``ast.parse``."""
    rules = list(all_rules().values())
    settings = Settings(min_confidence=Confidence.LOW, max_file_size=1 << 40, respect_gitignore=False)
    report = Report(name, len(files))
    start = time.perf_counter()
    result, _ = lint_paths([str(p) for p in files], rules, settings, jobs=jobs)
    report.seconds = time.perf_counter() - start
    report.findings = len(result.findings)
    unparsable = set()
    for error in result.errors:
        report.errors[error.kind.value] += 1
        if error.kind is ErrorKind.INTERNAL:
            report.internal.append(error)
        elif error.kind in UNPARSABLE:
            unparsable.add(error.path)
        elif error.kind in (ErrorKind.TOO_COMPLEX, ErrorKind.UNSUPPORTED):
            report.too_complex.append(f"{error.path} ({error.reason})")
    rejected = {str(p) for p in files if ast_rejects(p)}
    report.only_leaklint = sorted(unparsable - rejected)
    refused = {e.path for e in result.errors if e.kind in (ErrorKind.TOO_COMPLEX, ErrorKind.UNSUPPORTED)}
    report.only_ast = sorted(rejected - unparsable - refused)
    return report


def describe(report: Report) -> str:
    lines = [
        f"{report.name}: {report.files} files in {report.seconds:.1f} s, {report.findings} findings, "
        f"errors by kind {dict(report.errors) or '{}'}: {'OK' if report.ok else 'FAILED'}"
    ]
    lines += [f"  internal error: {e.describe()}" for e in report.internal]
    lines += [f"  unparsable to leaklint only: {p}" for p in report.only_leaklint]
    lines += [f"  rejected by ast.parse only: {p}" for p in report.only_ast]
    lines += [f"  refused on purpose (valid Python, too deep or beyond libcst): {p}" for p in report.too_complex]
    return "\n".join(lines)


def bodies(args: argparse.Namespace) -> Iterable[tuple[str, list[Path]]]:
    if args.stdlib:
        yield f"stdlib (Python {sys.version.split()[0]})", stdlib_files()
    if args.torch:
        files = torch_files()
        if files:
            yield "torch sources", files
        else:
            print("torch is not installed: its sources are skipped", file=sys.stderr)
    if args.corpus:
        yield f"corpus {args.corpus}", sorted(p for p in args.corpus.rglob("*.py") if ".wheels" not in p.parts)
    for path in args.paths:
        yield str(path), sorted(path.rglob("*.py")) if path.is_dir() else [path]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--no-stdlib", dest="stdlib", action="store_false")
    parser.add_argument("--no-torch", dest="torch", action="store_false")
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--jobs", type=int, default=default_jobs())
    args = parser.parse_args()
    failed = False
    for name, files in bodies(args):
        report = check(name, files, jobs=args.jobs)
        print(describe(report), flush=True)
        failed |= not report.ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
