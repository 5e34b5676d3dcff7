"""``--fix``: lint, apply the allowed fixes, re-lint, repeat until nothing more changes.

Each pass applies every non-overlapping fix at once (``leaklint.fixes.apply.apply_fixes``); a fix that
lost an overlap is picked up by the next pass, after re-linting the new text. The new text must
compile before it is accepted: if a combination of fixes does not, the fixes are tried one by one
and the ones that break the file are dropped (and reported as an internal error, since that is a
leaklint bug). Files are only written by the caller, atomically, after everything is known.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Sequence

from leaklint.config import Settings
from leaklint.discovery import is_notebook_path
from leaklint.engine import STDIN_PATH, SourceProblem, check_size, lint_text, map_in_workers, read_source
from leaklint.findings import Applicability, ErrorKind, FileError, Finding, TextEdit
from leaklint.fixes.apply import apply_fixes, line_starts, unified_diff
from leaklint.rule import Rule

#: Enough for fixes that overlap several deep (each pass applies at least one fix).
MAX_PASSES = 8


@dataclass
class FileFixes:
    """What fixing one file produced; ``fixed`` equals ``original`` when nothing applied."""

    path: str
    display_path: str
    original: str = ""
    fixed: str = ""
    encoding: str = "utf-8"
    data: bytes = b""
    applied: list[Finding] = field(default_factory=list)
    remaining: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    #: The edits each pass applied, in that pass's text coordinates (for audits such as bench/fix_corpus.py).
    passes: list[tuple[TextEdit, ...]] = field(default_factory=list)
    #: Where each of ``applied`` is in the fixed text: 1-based (line, column), for ``--show-fixes``;
    #: in a notebook, within the cell ``applied_cells`` names.
    applied_at: list[tuple[int, int]] = field(default_factory=list)
    applied_cells: list[int | None] = field(default_factory=list)
    #: A notebook's changed cells: (number, source before, source after).
    cell_changes: list[tuple[int, str, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.fixed != self.original

    def fixed_bytes(self) -> bytes:
        """The fixed text in the file's own encoding (a UTF-8 BOM stays; line endings were never touched)."""
        return self.fixed.encode(self.encoding)

    def diff(self) -> str:
        """What fixing changed, as a unified diff; one per changed cell in a notebook."""
        if self.cell_changes:
            from leaklint.notebook import cell_diff

            return "".join(cell_diff(self.display_path, number, before, after) for number, before, after in self.cell_changes)
        return unified_diff(self.display_path, self.original, self.fixed)


def allowed_by(unsafe: bool):  # type: ignore[no-untyped-def]
    """The predicate ``apply_fixes`` uses: safe fixes, plus unsafe ones with ``--unsafe-fixes``."""
    levels = {Applicability.SAFE, Applicability.UNSAFE} if unsafe else {Applicability.SAFE}

    def allowed(finding: Finding) -> bool:
        return finding.fix is not None and finding.fix.applicability in levels

    return allowed


def _compiles(text: str) -> bool:
    try:
        compile(text, "<fixed>", "exec", dont_inherit=True, flags=0x400)  # ast.PyCF_ONLY_AST
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def fix_text(
    text: str, path: str, rules: Sequence[type[Rule]], settings: Settings, *, unsafe: bool, cells: Sequence[tuple[int, int]] | None = None
) -> FileFixes:
    """Fix ``text`` (reported as ``path``) in passes; the result holds the final text and findings.
    ``cells``: a notebook program's cell spans (see :func:`~leaklint.engine.lint_text`), followed
    through the passes."""
    outcome = FileFixes(path, path, original=text, fixed=text)
    allowed = allowed_by(unsafe)
    refused: set[tuple[str, int, str]] = set()
    current = text
    linted = lint_text(current, path, rules, settings, cells=cells)
    located: list[int] = []  # offsets of outcome.applied in the current text
    for _ in range(MAX_PASSES):
        if linted.errors:
            break
        starts = line_starts(current)
        usable = [f for f in linted.findings if allowed(f) and _fix_key(f, starts) not in refused]
        if not usable:
            break
        result = apply_fixes(current, usable, lambda finding: True)
        bad = [f for f in result.applied if not _compiles(apply_fixes(current, [f], lambda _: True).text)]
        if bad or not _compiles(result.text):
            _refuse(outcome, refused, bad or result.applied, "would not compile", starts)
            continue
        moved_cells = _cells_after(cells, result.edits)
        relinted = lint_text(result.text, path, rules, settings, cells=moved_cells)
        stuck = _still_reported(current, result.text, result.edits, result.applied, relinted.findings)
        if stuck:
            _refuse(outcome, refused, stuck, "did not remove the finding", starts)
            continue
        located = [_moved(offset, result.edits)[0] for offset in located]
        located += [_moved(starts[f.line - 1] + f.column - 1, result.edits)[0] for f in result.applied]
        outcome.applied.extend(result.applied)
        outcome.passes.append(tuple(result.edits))
        # A refused fix stays refused where its finding moved to in the new text.
        refused = {(code, _moved(offset, result.edits)[0], message) for code, offset, message in refused}
        current, linted, cells = result.text, relinted, moved_cells
    outcome.fixed = current
    final_starts = line_starts(current)
    for offset in located:
        line = bisect.bisect_right(final_starts, offset)
        outcome.applied_at.append((line, offset - final_starts[line - 1] + 1))
    outcome.remaining = linted.findings
    outcome.errors.extend(linted.errors)
    return outcome


def _cells_after(cells: Sequence[tuple[int, int]] | None, edits: Sequence[TextEdit]) -> list[tuple[int, int]] | None:
    """Where cell spans are after ``edits`` (None stays None; an edit across cells: None too, and
    fixing the notebook reports it)."""
    if cells is None:
        return None
    from leaklint.notebook import NotebookError, _end_after, _start_after

    try:
        return [(_start_after(start, edits), _end_after(end, edits)) for start, end in cells]
    except NotebookError:
        return None


def _fix_key(finding: Finding, starts: Sequence[int]) -> tuple[str, int, str]:
    """Identify a finding across passes by where it is: its rule, its offset in the current text
    (kept up to date as fixes elsewhere move it) and its message. Two findings with the same
    message and the same fix text elsewhere in the file are different findings."""
    return (finding.code, starts[finding.line - 1] + finding.column - 1, finding.message)


def _refuse(outcome: FileFixes, refused: set[tuple[str, int, str]], findings: Sequence[Finding], why: str, starts: Sequence[int]) -> None:
    """A fix that breaks the file or misses its target is a leaklint bug: never apply it, say so."""
    for finding in findings:
        refused.add(_fix_key(finding, starts))
        outcome.errors.append(
            FileError(
                outcome.display_path,
                ErrorKind.INTERNAL,
                f"internal error: the {finding.code} fix at {finding.line}:{finding.column} {why}; not applied (please report this)",
                finding.code,
            )
        )


def _still_reported(before: str, after: str, edits: Sequence[TextEdit], applied: Sequence[Finding], findings: Sequence[Finding]) -> list[Finding]:
    """Applied fixes whose finding is reported again where it went: the fix missed its target."""
    old_starts, new_starts = line_starts(before), line_starts(after)
    reported = [(f.code, f.message, new_starts[f.line - 1] + f.column - 1) for f in findings]
    stuck = []
    for finding in applied:
        low, high = _moved(old_starts[finding.line - 1] + finding.column - 1, edits)
        if any(code == finding.code and message == finding.message and low <= at <= high for code, message, at in reported):
            stuck.append(finding)
    return stuck


def _moved(offset: int, edits: Sequence[TextEdit]) -> tuple[int, int]:
    """Where text at ``offset`` is after ``edits``: one offset, or the span of the edit it was in."""
    shift = 0
    for edit in edits:
        if edit.start <= offset < edit.end or edit.start == edit.end == offset:
            start = edit.start + shift
            return start, start + len(edit.replacement)
        if edit.start > offset:
            break
        shift += len(edit.replacement) - (edit.end - edit.start)
    return offset + shift, offset + shift


@dataclass(frozen=True)
class _FixJob:
    path: str
    display_path: str
    rules: tuple[type[Rule], ...]
    settings: Settings
    unsafe: bool


def _run_fix_job(job: _FixJob) -> FileFixes:
    notebook = is_notebook_path(job.display_path)
    try:
        data, text, encoding = read_source(job.path, job.settings, notebook=notebook)
    except SourceProblem as problem:
        return FileFixes(job.path, job.display_path, errors=[FileError(job.display_path, problem.kind, problem.reason)])
    fix = fix_notebook if notebook else fix_text
    outcome = fix(text, job.display_path, job.rules, job.settings, unsafe=job.unsafe)
    outcome.path, outcome.data, outcome.encoding = job.path, data, encoding
    return outcome


def fix_notebook(text: str, path: str, rules: Sequence[type[Rule]], settings: Settings, *, unsafe: bool) -> FileFixes:
    """Fix a notebook's text: :func:`fix_text` on the program its code cells make, then the changed
    cells spliced back into the JSON (:mod:`leaklint.notebook`); findings are placed in their cells."""
    from leaklint.notebook import Notebook, NotebookError

    outcome = FileFixes(path, path, original=text, fixed=text)
    try:
        notebook = Notebook.parse(text)
        program = notebook.program()
        check_size(len(program.text), settings, "the code cells hold")
    except NotebookError as error:
        outcome.errors.append(FileError(path, ErrorKind.INVALID_NOTEBOOK, error.reason))
        return outcome
    except SourceProblem as problem:
        outcome.errors.append(FileError(path, problem.kind, problem.reason))
        return outcome
    outcome.errors.extend(program.errors(path))
    if not program.blocks:
        return outcome
    cells = [(block.start, block.end) for block in program.blocks]
    fixed = fix_text(program.text, path, rules, settings, unsafe=unsafe, cells=cells)
    outcome.errors.extend(program.localize_error(error) for error in fixed.errors)
    try:
        sources = program.fixed_sources(fixed.fixed, fixed.passes)
        outcome.fixed = notebook.with_sources(sources)
        after = Notebook.parse(outcome.fixed).program() if sources else program
    except NotebookError as error:
        outcome.errors.append(FileError(path, ErrorKind.INTERNAL, f"internal error: {error.reason}; no fix applied (please report this)"))
        outcome.fixed = text
        outcome.remaining = [program.localize(f) for f in lint_text(program.text, path, rules, settings, cells=cells).findings]
        return outcome
    outcome.cell_changes = [(number, notebook.cells[number - 1].source, source) for number, source in sorted(sources.items())]
    outcome.passes = fixed.passes
    after_cells = [(block.start, block.end) for block in after.blocks]
    remaining = fixed.remaining if after.text == fixed.fixed else lint_text(after.text, path, rules, settings, cells=after_cells).findings
    outcome.remaining = [after.localize(f) for f in remaining]
    for finding, (line, column) in zip(fixed.applied, fixed.applied_at):
        block = after.block_at(line)
        outcome.applied.append(finding)
        outcome.applied_at.append((block.line_in_cell(line), column))
        outcome.applied_cells.append(block.cell.number)
    return outcome


def fix_paths(
    paths: Sequence[str],
    rules: Sequence[type[Rule]],
    settings: Settings,
    *,
    unsafe: bool,
    jobs: int = 1,
    stdin_filename: str | None = None,
) -> list[FileFixes]:
    """Compute the fixes for ``paths`` (nothing is written), in path order."""
    work = [
        _FixJob(path, (stdin_filename or STDIN_PATH) if path == STDIN_PATH else path, tuple(rules), settings, unsafe)
        for path in paths
    ]
    stdin_jobs = [job for job in work if job.path == STDIN_PATH]
    outcomes = [_run_fix_job(job) for job in stdin_jobs]
    outcomes.extend(map_in_workers(_run_fix_job, [job for job in work if job.path != STDIN_PATH], jobs))
    return outcomes
