"""The ``--fix`` and ``--diff`` modes of ``leaklint check``.

``--diff`` prints what ``--fix`` would change and writes nothing (exit 1 when there is a diff).
``--fix`` writes every changed file atomically — and refuses when the file changed on disk since
it was read — then reports the findings that remain, so the exit status says whether work is
left: 0 nothing remains, 1 findings remain, 2 a file could not be read, parsed or written.
With ``-`` the fixed source goes to standard output and the report to standard error.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import click

from leaklint.console import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, echo_text, exit_status, report, report_options, selected_rules, warn_if_nothing_found
from leaklint.config import Settings
from leaklint.engine import STDIN_PATH, lint_document
from leaklint.findings import ErrorKind, FileError, Finding, LintResult
from leaklint.fixes.apply import FileChangedError, write_atomically
from leaklint.fixes.fixer import FileFixes, fix_paths
from leaklint.report import is_text_format
from leaklint.report._paths import printable
from leaklint.report.text import location


@dataclass(frozen=True)
class FixRequest:
    """The ``check`` options that matter when fixing."""

    paths: Sequence[str]
    settings: Settings
    unsafe: bool
    diff_only: bool
    show_fixes: bool
    output_format: str
    output_file: str | None
    exit_zero: bool
    jobs: int | None
    stdin_filename: str | None
    force_exclude: bool
    show_source: bool
    color: str
    quiet: bool
    exit_non_zero_on_fix: bool = False


def run_fix(request: FixRequest) -> int:
    """Run ``--fix`` or ``--diff`` and return the exit status."""
    from leaklint.discovery import discover
    from leaklint.engine import default_jobs
    from leaklint.project import with_project_facts

    known, rules = selected_rules(request.settings)
    found = discover(request.paths, request.settings, force_exclude=request.force_exclude)
    warn_if_nothing_found(request.paths, found)
    request = replace(request, settings=with_project_facts(request.settings, found.files, jobs=request.jobs or default_jobs()))
    outcomes = fix_paths(
        found.files,
        rules,
        request.settings,
        unsafe=request.unsafe,
        jobs=request.jobs or default_jobs(),
        stdin_filename=request.stdin_filename,
    )
    errors = [*found.errors, *(error for outcome in outcomes for error in outcome.errors)]
    if request.diff_only:
        return _show_diff(outcomes, errors)
    return _write_and_report(request, known, rules, outcomes, errors, files_checked=len(found.files))


def _show_diff(outcomes: list[FileFixes], errors: list[FileError]) -> int:
    changed = [outcome for outcome in outcomes if outcome.changed]
    echo_text(printable("".join(o.diff() for o in changed)))
    for error in sorted(errors, key=FileError.sort_key):
        click.echo(printable(error.describe()), err=True)
    count = sum(len(o.applied) for o in changed)
    if count:
        click.echo(f"Would fix {_plural(count, 'finding')} in {_plural(len(changed), 'file')}.", err=True)
    else:
        click.echo("No fixes to apply.", err=True)
    if errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if changed else EXIT_CLEAN


def _write_and_report(request: FixRequest, known: dict, rules: list, outcomes: list[FileFixes], errors: list[FileError], files_checked: int) -> int:
    remaining: list[Finding] = []
    fixed: list[FileFixes] = []
    texts: dict[str, str] = {}
    for outcome in outcomes:
        if outcome.path == STDIN_PATH:
            sys.stdout.write(outcome.fixed)
            sys.stdout.flush()
        elif outcome.changed:
            problem = _write(outcome)
            if problem is not None:
                errors.append(problem)
                # Nothing was written: what remains is what the file had.
                remaining.extend(lint_document(outcome.original, outcome.display_path, rules, request.settings).findings)
                continue
        if outcome.applied:
            fixed.append(outcome)
        remaining.extend(outcome.remaining)
        texts[outcome.display_path] = outcome.fixed
    to_stderr = STDIN_PATH in {o.path for o in outcomes}
    if request.show_fixes and fixed:
        echo_text(printable(_fix_listing(fixed)), err=to_stderr or not is_text_format(request.output_format))
    result = LintResult(tuple(sorted(remaining, key=Finding.sort_key)), tuple(sorted(errors, key=FileError.sort_key)), files_checked)
    options = report_options(request.output_file, request.color, request.show_source, request.quiet, texts, to_stderr=to_stderr)
    if not report(result, known, request.output_format, options, request.output_file, to_stderr=to_stderr):
        return EXIT_ERROR
    count = sum(len(o.applied) for o in fixed)
    if is_text_format(request.output_format) and not request.quiet and count:
        click.echo(f"Fixed {_plural(count, 'finding')} in {_plural(len(fixed), 'file')}.", err=to_stderr)
    status = exit_status(result, request.exit_zero)
    if status == EXIT_CLEAN and count and request.exit_non_zero_on_fix:
        return EXIT_FINDINGS  # Ruff's --exit-non-zero-on-fix: a commit hook that fixed something fails
    return status


def _write(outcome: FileFixes) -> FileError | None:
    """Write one fixed file; the reason it could not be written, if so."""
    try:
        data = outcome.fixed_bytes()
    except UnicodeEncodeError as error:
        return FileError(outcome.display_path, ErrorKind.IO, f"fixed source cannot be encoded as {outcome.encoding}: {error.reason}; not written")
    try:
        write_atomically(Path(outcome.path), data, expected=outcome.data)
    except FileChangedError:
        return FileError(outcome.display_path, ErrorKind.IO, "changed on disk while being fixed; not overwritten (run --fix again)")
    except OSError as error:
        return FileError(outcome.display_path, ErrorKind.IO, f"cannot write the fixed file: {error.strerror or error}")
    return None


def _fix_listing(fixed: list[FileFixes]) -> str:
    """``Fixed 3 findings:`` then one line per fix, where it is in the fixed file:
    ``train.py:12:9: LL101 Detach 'loss' (safe)`` (``train.ipynb:cell 3:2:5: ...`` in a notebook)."""
    count = sum(len(o.applied) for o in fixed)
    lines = [f"Fixed {_plural(count, 'finding')}:"]
    for outcome in fixed:
        cells = outcome.applied_cells or [None] * len(outcome.applied)
        located = sorted(zip(cells, outcome.applied_at, outcome.applied), key=lambda item: (item[0] or 0, item[1], item[2].code))
        for cell, (line, column), finding in located:
            assert finding.fix is not None
            where = location(outcome.display_path, line, column, cell)
            lines.append(f"{where}: {finding.code} {finding.fix.title} ({finding.fix.applicability.value})")
    return "\n".join(lines) + "\n"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def run_add_noqa(paths: Sequence[str], settings: Settings, *, jobs: int | None, force_exclude: bool) -> int:
    """``--add-noqa``: suppress every current finding with a ``# noqa: CODE`` on its line (merged
    into a ``# noqa`` the line already has), as Ruff's ``--add-noqa``; returns the exit status.

    Notebooks are left alone (a comment in a cell's JSON is not something to write blindly), and
    so is standard input; each file is written whole or not at all."""
    from leaklint.discovery import discover, is_notebook_path
    from leaklint.engine import SourceProblem, default_jobs, lint_paths, read_source
    from leaklint.fixes.noqa import add_noqa
    from leaklint.project import with_project_facts

    known, rules = selected_rules(settings)
    found = discover(paths, settings, force_exclude=force_exclude)
    warn_if_nothing_found(paths, found)
    settings = with_project_facts(settings, found.files, jobs=jobs or default_jobs())
    result, _ = lint_paths(found.files, rules, settings, jobs=jobs or default_jobs(), pre_errors=found.errors)
    errors = list(result.errors)
    by_file: dict[str, list[Finding]] = {}
    for finding in result.findings:
        if finding.path != STDIN_PATH and not is_notebook_path(finding.path):
            by_file.setdefault(finding.path, []).append(finding)
    added = files = 0
    for path, findings in by_file.items():
        try:
            data, text, encoding = read_source(path, settings)
            new_text, count = add_noqa(text, findings)
            if count:
                write_atomically(Path(path), new_text.encode(encoding), expected=data)
                added, files = added + count, files + 1
        except SourceProblem as problem:
            errors.append(FileError(path, problem.kind, problem.reason))
        except FileChangedError:
            errors.append(FileError(path, ErrorKind.IO, "changed on disk while noqa comments were added; not overwritten"))
        except (OSError, UnicodeEncodeError) as error:
            errors.append(FileError(path, ErrorKind.IO, f"cannot write the file: {getattr(error, 'strerror', None) or error}"))
    for error in sorted(errors, key=FileError.sort_key):
        click.echo(printable(error.describe()), err=True)
    click.echo(f"Added {_plural(added, 'noqa directive')} in {_plural(files, 'file')}.", err=True)
    return EXIT_ERROR if errors else EXIT_CLEAN
