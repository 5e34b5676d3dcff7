"""Lint files: read, check the syntax, gate, parse with libcst, analyse, run the rules, filter, collect.

One file's problems never stop the run: an unreadable file, a syntax error, or a rule that
crashes becomes a :class:`~leaklint.findings.FileError` (exit code 2) and the other files are still
linted. Work for many files is spread over a process pool; results are sorted, so ``--jobs 4``
prints exactly what ``--jobs 1`` prints.
"""

from __future__ import annotations

import ast
import codecs
import contextlib
import gc
import io
import os
import re
import sys
import threading
import tokenize
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Sequence, TypeVar

from leaklint.config import Settings, matches_selector
from leaklint.discovery import is_notebook_path
from leaklint.findings import Confidence, ErrorKind, FileError, Finding, Fix, LintResult
from leaklint.gate import read_contents, rules_for
from leaklint.rule import Rule, Violation

if TYPE_CHECKING:
    import libcst as cst

    from leaklint.cache import ResultCache
    from leaklint.fixes.edits import SourceEditor

STDIN_PATH = "-"
_WIDE_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_CODING_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+", re.MULTILINE)
#: Below this many files a process pool costs more than it saves.
MIN_FILES_PER_WORKER = 8
#: Deeper syntax trees are refused: generated code, and libcst's native parser would need a
#: stack deeper than any thread is given (a crash there cannot be caught).
MAX_NESTING_DEPTH = 1500
_DEEP_STACK_BYTES = 512 * 1024 * 1024
_DEEP_RECURSION_LIMIT = 40_000

T = TypeVar("T")


@dataclass
class FileOutcome:
    """What linting one file produced."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    #: The decoded text, kept only when a reporter needs source lines.
    text: str | None = None


class SourceProblem(Exception):
    def __init__(self, kind: ErrorKind, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


# --- reading and checking the source ---------------------------------------------------------
def read_bytes(path: str) -> bytes:
    """The file's bytes, or a :class:`SourceProblem` with a one-line reason."""
    try:
        if path == STDIN_PATH:
            return _read_stdin()
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise SourceProblem(ErrorKind.NOT_FOUND, "no such file or directory") from None
    except IsADirectoryError:
        raise SourceProblem(ErrorKind.IO, "is a directory, not a file") from None
    except PermissionError:
        raise SourceProblem(ErrorKind.IO, "permission denied") from None
    except OSError as error:
        raise SourceProblem(ErrorKind.IO, error.strerror or str(error)) from None


def _read_stdin() -> bytes:
    """All of standard input. Python sets ``sys.stdin`` to None when descriptor 0 is closed
    (``leaklint - <&-``), and an embedding program may give a stream without bytes."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise SourceProblem(ErrorKind.IO, "cannot read standard input: it is closed")
    return stream.read()  # type: ignore[no-any-return]


def decode(data: bytes) -> str:
    """Decode like Python does (BOM, ``# coding:`` cookie, else UTF-8), refusing binary files."""
    return decode_source(data)[0]


def decode_source(data: bytes) -> tuple[str, str]:
    """The text and the encoding it was read with (``utf-8-sig`` keeps a BOM when re-encoding)."""
    if data.startswith(_WIDE_BOMS):
        raise SourceProblem(
            ErrorKind.DECODE, "UTF-16/UTF-32 encoded: Python source must be UTF-8 or an 8-bit encoding named by a coding cookie"
        )
    if b"\x00" in data:
        raise SourceProblem(ErrorKind.DECODE, "contains a NUL byte (binary file?)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        if data.startswith(codecs.BOM_UTF8):
            raise SourceProblem(ErrorKind.DECODE, f"bad encoding declaration: a UTF-8 byte-order mark with a coding cookie for another encoding ({error.msg})") from None
        if _CODING_COOKIE.search(b"\n".join(data.splitlines()[:2])):
            raise SourceProblem(ErrorKind.DECODE, f"bad encoding declaration: {error.msg}") from None
        encoding = "utf-8"  # undecodable bytes on the first lines: report them like any other
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as error:
        raise SourceProblem(
            ErrorKind.DECODE,
            f"cannot decode as {encoding}: byte 0x{data[error.start]:02x} at offset {error.start}",
        ) from None
    except LookupError:
        raise SourceProblem(ErrorKind.DECODE, f"unknown encoding {encoding!r}") from None


def check_syntax(text: str, path: str) -> ast.AST:
    """Python's own verdict first: it is fast, and libcst is only run on what Python accepts.
    Returns the ``ast`` tree, which the gate reads (:mod:`leaklint.gate`)."""
    try:
        return compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)  # type: ignore[no-any-return]
    except SyntaxError as error:
        where = f" at {error.lineno}:{error.offset}" if error.lineno else ""
        raise SourceProblem(ErrorKind.SYNTAX, f"syntax error{where}: {error.msg}") from None
    except (RecursionError, MemoryError):
        raise SourceProblem(ErrorKind.TOO_COMPLEX, "too deeply nested to parse") from None
    except ValueError as error:
        raise SourceProblem(ErrorKind.DECODE, str(error)) from None


def refuse_deep_nesting(depth: int) -> None:
    """Before libcst meets a file: pathological nesting would crash its native parser (a segfault
    cannot be caught). Checked only for files the analysis needs: the gate walks the tree anyway,
    and a file no rule needs is never at risk."""
    if depth > MAX_NESTING_DEPTH:
        raise SourceProblem(
            ErrorKind.TOO_COMPLEX, f"too deeply nested to analyse (syntax tree depth {depth} > {MAX_NESTING_DEPTH})"
        )


# --- running the rules ------------------------------------------------------------------------
@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block.

    Linting a file allocates hundreds of thousands of small objects (``ast`` and libcst nodes,
    analysis values) and makes no reference cycles that matter, so a collection started meanwhile
    only walks live trees: 40% of the analysis of a large file, 7% of a whole corpus run counting
    ``compile`` and the gate. The collector resumes after the block and frees what it left.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def run_deep(function: Callable[[], T]) -> T:
    """Run ``function`` on a thread with a large stack: syntax trees of generated code nest deeply,
    and both libcst's visitors and the analysis recurse once per level."""
    result: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            with collector_paused():
                result.append(function())
        except BaseException as error:  # re-raised in the caller's thread
            failure.append(error)

    previous_stack = threading.stack_size()
    previous_limit = sys.getrecursionlimit()
    try:
        threading.stack_size(_DEEP_STACK_BYTES)
        sys.setrecursionlimit(max(previous_limit, _DEEP_RECURSION_LIMIT))
        # a daemon: Ctrl-C (in --watch, say) ends the process without waiting for an analysis
        # still running on it
        worker = threading.Thread(target=target, name="leaklint-deep", daemon=True)
        worker.start()
    finally:
        threading.stack_size(previous_stack)
    worker.join()
    sys.setrecursionlimit(previous_limit)
    if failure:
        raise failure[0]
    return result[0]


def _internal_error(path: str, error: BaseException, rule: str | None) -> FileError:
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    what = f"{type(error).__name__}: {error}"
    stage = f"rule {rule}" if rule else "analysis"
    return FileError(path, ErrorKind.INTERNAL, f"internal error in {stage}: {what}{where} (please report this)", rule)


def _apply_rules(
    text: str, path: str, rules: Sequence[type[Rule]], settings: Settings
) -> tuple[list[tuple[type[Rule], Violation]], list[FileError], cst.Module | None]:
    """The rules' violations in ``text``, found on libcst's tree (the one tree of a run)."""
    import libcst as cst

    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.walk import children_cached

    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        # Python accepted the file (check_syntax ran first): this is libcst's limit, not the user's.
        raise SourceProblem(
            ErrorKind.UNSUPPORTED,
            f"valid Python that libcst cannot parse (at {error.raw_line}:{error.raw_column + 1}: {error.message}); not linted",
        ) from None
    with children_cached():
        try:
            facts = ModuleFacts(
                module,
                project_no_grad=frozenset(settings.no_grad_decorators),
                project_classes=settings.project_classes,
                grad_free=settings.grad_free_in(path),
                notebook=is_notebook_path(path),
            )
        except RecursionError:
            raise SourceProblem(ErrorKind.TOO_COMPLEX, "too deeply nested to analyse") from None
        except Exception as error:  # a bug in leaklint, not in the user's file
            return [], [_internal_error(path, error, None)], module
        violations: list[tuple[type[Rule], Violation]] = []
        errors: list[FileError] = []
        try:
            for rule in rules:
                if rule.autograd and not facts.records_autograd:
                    continue
                try:
                    violations.extend((rule, v) for v in rule().check(facts))
                except RecursionError:
                    errors.append(FileError(path, ErrorKind.TOO_COMPLEX, "too deeply nested to analyse", rule.code))
                except Exception as error:
                    errors.append(_internal_error(path, error, rule.code))
        finally:
            facts.release()
    return violations, errors, module


def _position_findings(module: cst.Module, text: str, path: str, violations: list[tuple[type[Rule], Violation]], settings: Settings) -> list[Finding]:
    from leaklint.analysis.positions import node_positions
    from leaklint.fixes.edits import SourceEditor, import_anchor_nodes, nodes_to_position

    nodes = [v.node for _, v in violations] + [v.statement for _, v in violations if v.statement is not None]
    fixes = [v.fix for rule, v in violations if v.fix is not None and settings.fix_applicability(rule.code, v.fix.applicability)]
    for fix in fixes:
        nodes.extend(nodes_to_position(fix))
    if any(fix.imports for fix in fixes):
        nodes.extend(import_anchor_nodes(module))
    positions = node_positions(module, nodes)
    editor = SourceEditor(module, text, positions)
    findings = []
    for rule, violation in violations:
        where = positions[violation.node]
        span = positions.get(violation.statement, where) if violation.statement is not None else where
        findings.append(
            Finding(
                path=path,
                line=where.start.line,
                column=where.start.column + 1,
                end_line=where.end.line,
                end_column=where.end.column + 1,
                code=rule.code,
                name=rule.name,
                severity=rule.severity,
                confidence=violation.confidence,
                message=violation.message,
                help=violation.help or rule.help,
                statement_start=span.start.line,
                statement_end=span.end.line,
                fix=_text_fix(rule, violation, editor, settings),
            )
        )
    return findings


def _text_fix(rule: type[Rule], violation: Violation, editor: SourceEditor, settings: Settings) -> Fix | None:
    """The violation's fix as text edits, with the applicability the configuration gives it;
    None when there is none, the configuration makes it unfixable, or it cannot be placed."""
    from leaklint.fixes.edits import FixUnavailable

    if violation.fix is None:
        return None
    applicability = settings.fix_applicability(rule.code, violation.fix.applicability)
    if applicability is None:
        return None
    try:
        fix = editor.fix(violation.fix)
    except FixUnavailable:
        return None
    return fix.with_applicability(applicability) if fix.edits else None


def _reportable(
    violations: list[tuple[type[Rule], Violation]], path: str, settings: Settings, *, every_confidence: bool = False
) -> list[tuple[type[Rule], Violation]]:
    """The violations the configuration lets through (confidence, per-file ignores): only those are
    positioned and given fixes, which is most of the cost of a finding. ``every_confidence``: keep
    those below the minimum confidence too (the unused-suppression rule needs them; ``_filter``
    drops them after)."""
    if not violations:
        return []
    ignored = settings.ignored_codes_for(path) if path != STDIN_PATH else ()
    least = Confidence.LOW if every_confidence else settings.min_confidence
    return [
        (rule, v)
        for rule, v in violations
        if v.confidence >= least and not any(matches_selector(rule.code, s) for s in ignored)
    ]


def _filter(
    findings: Iterable[Finding], text: str, path: str, settings: Settings,
    unused_rule: type[Rule] | None = None, ran: Sequence[type[Rule]] = (), regions: Sequence[tuple[int, int]] | None = None,
) -> list[Finding]:
    """Drop suppressed findings (``# noqa``, ranges, file-level comments), those below the minimum
    confidence and duplicates; sort. With ``unused_rule`` (LL901, selected), add its findings: the
    suppressions that suppressed none of ``findings`` (every confidence counts: a suppression of a
    low-confidence finding is still needed under ``--min-confidence low``)."""
    from leaklint.suppressions import Suppressions, unused_suppression_findings

    findings = list(findings)
    if not findings and unused_rule is None:
        return []
    suppressions = Suppressions.parse(text, regions)
    kept = [
        f for f in findings
        if not suppressions.suppress(f.code, f.line, f.end_line, {f.line, f.statement_start, f.statement_end})
        and f.confidence >= settings.min_confidence
    ]
    if unused_rule is not None:
        from leaklint.registry import all_rules

        codes = {rule.code for rule in ran}
        kept += unused_suppression_findings(text, path, suppressions, unused_rule, codes, codes | set(all_rules()), settings)
    unique = {(f.line, f.column, f.code, f.message): f for f in kept}
    return sorted(unique.values(), key=Finding.sort_key)


def lint_text(
    text: str, path: str, rules: Sequence[type[Rule]], settings: Settings, *, gate: bool = True,
    cells: Sequence[tuple[int, int]] | None = None,
) -> FileOutcome:
    """Lint decoded source ``text`` (reported as ``path``) with ``rules``.

    Only the rules whose needs the file meets (:mod:`leaklint.gate`) are run; when none is, the
    file is not parsed with libcst at all. ``gate=False`` runs every rule regardless: for the
    tests and the benchmark that prove the gate only skips work. ``cells``: the (start, end)
    offsets of a notebook program's cells, which range suppressions do not leave.
    """
    with collector_paused():  # see there: 7% of a corpus run
        # The collector resumes only once the file's trees are gone with the call's frame: a
        # collection that meets them would walk them all.
        return _lint_text(text, path, rules, settings, gate, cells)


def _cell_lines(text: str, cells: Sequence[tuple[int, int]] | None) -> list[tuple[int, int]] | None:
    """Each cell's (first, last) line from its (start, end) offsets."""
    if not cells:
        return None
    from bisect import bisect_right

    from leaklint.fixes.apply import line_starts

    starts = line_starts(text)
    return [(bisect_right(starts, start), bisect_right(starts, max(end - 1, start))) for start, end in cells]


def _lint_text(text: str, path: str, rules: Sequence[type[Rule]], settings: Settings, gate: bool, cells: Sequence[tuple[int, int]] | None = None) -> FileOutcome:
    from leaklint.suppressions import UNUSED_SUPPRESSION_CODE, may_hold_directives

    outcome = FileOutcome(path)
    # The unused-suppression rule reads the other rules' findings, not the tree: the engine runs
    # it after them (in _filter), for the rules that run on this file, where there are comments.
    ignored = settings.ignored_codes_for(path) if path != STDIN_PATH else ()
    ran = [rule for rule in rules if not any(matches_selector(rule.code, s) for s in ignored)]
    unused_rule = next((rule for rule in ran if rule.code == UNUSED_SUPPRESSION_CODE), None)
    if unused_rule is not None and not may_hold_directives(text):
        unused_rule = None
    try:
        analysed = _rules_to_run(text, path, [r for r in rules if r.code != UNUSED_SUPPRESSION_CODE], settings, gate, unused_rule is not None)
        if not analysed and unused_rule is None:
            return outcome
        findings: list[Finding] = []
        if analysed:
            violations, outcome.errors, module = run_deep(lambda: _apply_rules(text, path, analysed, settings))
            violations = _reportable(violations, path, settings, every_confidence=unused_rule is not None)
            if violations:
                assert module is not None
                findings = run_deep(lambda: _position_findings(module, text, path, violations, settings))
        if findings or unused_rule is not None:
            outcome.findings = _filter(findings, text, path, settings, unused_rule, ran, _cell_lines(text, cells))
    except SourceProblem as problem:
        outcome.errors.append(FileError(path, problem.kind, problem.reason))
    return outcome


def _rules_to_run(text: str, path: str, rules: Sequence[type[Rule]], settings: Settings, gate: bool, every_confidence: bool = False) -> Sequence[type[Rule]]:
    """Python's syntax verdict, then the rules the gate lets through (all of them without the
    gate); refuses a tree too deep for libcst. The ``ast`` tree is dropped on return: on a large
    file it is a sizeable part of the memory libcst's parse will need. ``every_confidence``: gate
    for low-confidence findings too."""
    contents = read_contents(text, check_syntax(text, path))
    if gate:
        rules = rules_for(contents, rules, Confidence.LOW if every_confidence else settings.min_confidence)
    if rules:
        refuse_deep_nesting(contents.depth)
    return rules


def read_source(path: str, settings: Settings, *, notebook: bool = False) -> tuple[bytes, str, str]:
    """The file's bytes, decoded text and encoding; raises :class:`SourceProblem` for a bad file.
    A notebook's size limit is checked on its code (:func:`lint_document`), not on its outputs."""
    data = read_bytes(path)
    if not notebook:
        check_size(len(data), settings, "file is")
    text, encoding = decode_source(data)
    return data, text, encoding


def check_size(size: int, settings: Settings, what: str) -> None:
    """Refuse more than ``max-file-size`` (``what`` starts the reason: "file is")."""
    if size > settings.max_file_size:
        raise SourceProblem(
            ErrorKind.TOO_LARGE,
            f"{what} {_size(size)}, above max-file-size ({_size(settings.max_file_size)}); not linted "
            "(raise max-file-size in [tool.leaklint] or exclude the file)",
        )


def lint_file(path: str, rules: Sequence[type[Rule]], settings: Settings, *, display_path: str | None = None, keep_text: bool = False) -> FileOutcome:
    """Read and lint one file (``-`` is standard input); never raises for a bad file."""
    shown = display_path or path
    try:
        _, text, _ = read_source(path, settings, notebook=is_notebook_path(shown))
    except SourceProblem as problem:
        return FileOutcome(shown, errors=[FileError(shown, problem.kind, problem.reason)])
    outcome = lint_document(text, shown, rules, settings)
    if keep_text:
        outcome.text = text
    return outcome


def lint_document(text: str, path: str, rules: Sequence[type[Rule]], settings: Settings) -> FileOutcome:
    """:func:`lint_text` for a whole file's text; a Jupyter notebook (by its name) is linted as the
    program its code cells make, and its findings are placed in their cells (:mod:`leaklint.notebook`)."""
    if not is_notebook_path(path):
        return lint_text(text, path, rules, settings)
    from leaklint.notebook import Notebook, NotebookError

    try:
        program = Notebook.parse(text).program()
        check_size(len(program.text), settings, "the code cells hold")
    except NotebookError as error:
        return FileOutcome(path, errors=[FileError(path, ErrorKind.INVALID_NOTEBOOK, error.reason)])
    except SourceProblem as problem:
        return FileOutcome(path, errors=[FileError(path, problem.kind, problem.reason)])
    cells = [(block.start, block.end) for block in program.blocks]
    outcome = lint_text(program.text, path, rules, settings, cells=cells) if program.blocks else FileOutcome(path)
    outcome.findings = [program.localize(finding) for finding in outcome.findings]
    outcome.errors = [*program.errors(path), *(program.localize_error(error) for error in outcome.errors)]
    return outcome


def _size(count: int) -> str:
    return f"{count / 1024 / 1024:.1f} MiB" if count >= 1024 * 1024 else f"{count / 1024:.0f} KiB"


# --- many files -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Job:
    path: str
    display_path: str
    rules: tuple[type[Rule], ...]  # pickled by reference: workers import the rule modules
    settings: Settings
    keep_text: bool
    #: Set on a cache miss: where to store the result, and the content it was looked up with.
    cache: ResultCache | None = None
    cache_key: str | None = None
    digest: str | None = None


def _run_job(job: _Job) -> FileOutcome:
    outcome = lint_file(job.path, job.rules, job.settings, display_path=job.display_path, keep_text=job.keep_text)
    if job.cache is not None:
        _store(job, outcome)
    return outcome


def _size_of(job: _Job) -> int:
    try:
        return os.path.getsize(job.path)
    except OSError:
        return 0


def default_jobs() -> int:
    """The CPUs this process may use: its affinity mask, capped by a container's CPU quota (a
    ``--cpus 2`` container on a 64-core host must not start 64 workers)."""
    try:
        usable = max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        usable = max(1, os.cpu_count() or 1)
    quota = _cgroup_cpu_quota()
    return min(usable, quota) if quota else usable


def _cgroup_cpu_quota(root: str = "/sys/fs/cgroup") -> int | None:
    """Whole CPUs allowed by the cgroup (v2 ``cpu.max``, v1 ``cfs_quota_us``), or None."""
    for quota_file, period_file in ((f"{root}/cpu.max", None),
                                    (f"{root}/cpu/cpu.cfs_quota_us", f"{root}/cpu/cpu.cfs_period_us")):
        try:
            with open(quota_file) as handle:
                fields = handle.read().split()
            if period_file is not None:
                with open(period_file) as handle:
                    fields.append(handle.read().strip())
            quota, period = int(fields[0]), int(fields[1])
        except (OSError, ValueError, IndexError):
            continue  # "max", absent, or unreadable: no limit there
        if quota > 0 and period > 0:
            return max(1, -(-quota // period))
    return None


J = TypeVar("J")


def map_in_workers(function: Callable[[J], T], items: Sequence[J], jobs: int) -> list[T]:
    """``[function(item) for item in items]``, on a process pool when there is enough work to
    pay for starting one (``function`` and items must pickle)."""
    workers = min(jobs, len(items) // MIN_FILES_PER_WORKER)
    if workers <= 1:
        return [function(item) for item in items]
    from concurrent.futures import ProcessPoolExecutor  # multiprocessing: ~10 ms a one-file run need not pay

    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(function, items, chunksize=max(1, min(8, len(items) // (workers * 8)))))


def lint_paths(
    paths: Sequence[str],
    rules: Sequence[type[Rule]],
    settings: Settings,
    *,
    jobs: int = 1,
    keep_text: bool = False,
    keep_notebook_text: bool = False,
    stdin_filename: str | None = None,
    pre_errors: Sequence[FileError] = (),
    cache: ResultCache | None = None,
) -> tuple[LintResult, dict[str, str]]:
    """Lint ``paths`` (already discovered) and return the sorted result plus kept source texts
    (every file's with ``keep_text``, the notebooks' with ``keep_notebook_text``).

    With a ``cache``, files whose result is stored are answered first, in this process; only the
    others are linted (and a pool starts only if enough of them are left).
    """
    shown = [(path, (stdin_filename or STDIN_PATH) if path == STDIN_PATH else path) for path in paths]
    work = [
        _Job(path, display, tuple(rules), settings, keep_text or (keep_notebook_text and is_notebook_path(display)))
        for path, display in shown
    ]
    stdin_jobs = [job for job in work if job.path == STDIN_PATH]
    file_jobs = [job for job in work if job.path != STDIN_PATH]
    outcomes = [_run_job(job) for job in stdin_jobs]
    if cache is not None:
        hits, file_jobs = _from_cache(file_jobs, cache)
        outcomes.extend(hits)
    if len(file_jobs) >= 2 * MIN_FILES_PER_WORKER:
        # Largest files first, in small chunks: no worker is left alone with a big file at the end.
        # (Results are sorted below, so the order of work never shows.)
        file_jobs.sort(key=_size_of, reverse=True)
    outcomes.extend(map_in_workers(_run_job, file_jobs, jobs))
    findings = sorted((f for o in outcomes for f in o.findings), key=Finding.sort_key)
    errors = sorted([*pre_errors, *(e for o in outcomes for e in o.errors)], key=FileError.sort_key)
    texts = {o.path: o.text for o in outcomes if o.text is not None}
    return LintResult(tuple(findings), tuple(errors), len(work)), texts


# --- the result cache (leaklint/cache.py) -----------------------------------------------------
def _from_cache(jobs: Sequence[_Job], cache: ResultCache) -> tuple[list[FileOutcome], list[_Job]]:
    """Answer the jobs whose result is cached; return those outcomes and the jobs still to run,
    each carrying the key its result is to be stored under."""
    from dataclasses import replace

    from leaklint.cache import content_digest

    hits: list[FileOutcome] = []
    misses: list[_Job] = []
    for job in jobs:
        try:
            data = read_bytes(job.path)
        except SourceProblem:
            misses.append(job)  # reported by the normal path, never cached
            continue
        if len(data) > job.settings.max_file_size and not is_notebook_path(job.display_path):
            misses.append(job)
            continue
        digest = content_digest(data)
        key = cache.key(job.display_path, job.settings.ignored_codes_for(job.display_path), digest)
        stored = cache.load(key, job.display_path)
        if stored is None:
            misses.append(replace(job, cache=cache, cache_key=key, digest=digest))
            continue
        outcome = FileOutcome(job.display_path, list(stored.findings), list(stored.errors))
        if job.keep_text:
            try:
                outcome.text = decode(data)
            except SourceProblem:
                pass
        hits.append(outcome)
    return hits, misses


def _store(job: _Job, outcome: FileOutcome) -> None:
    """Store a freshly linted result, unless the file changed since it was looked up (then the
    result belongs to neither content; the next run lints the file again)."""
    from leaklint.cache import content_digest

    assert job.cache is not None and job.cache_key is not None
    try:
        unchanged = content_digest(read_bytes(job.path)) == job.digest
    except SourceProblem:
        return
    if unchanged:
        job.cache.store(job.cache_key, outcome.findings, outcome.errors)
