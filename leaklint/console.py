"""What the commands print and how they end: where a report goes, warnings, the exit status.

Shared by the lint command (:mod:`leaklint.cli`) and its ``--fix``/``--diff`` modes
(:mod:`leaklint.fixes.command`); the renderers themselves (:mod:`leaklint.report`) do no I/O.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Sequence

import click

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


def error(message: str) -> None:
    click.echo(f"leaklint: error: {message}", err=True)


def warning(message: str) -> None:
    click.echo(f"leaklint: warning: {message}", err=True)


def selected_rules(settings: object) -> tuple[dict, list]:
    """All known rules (code -> class) and the enabled ones, in code order. (A selector that
    matches no rule was refused when the settings were read.)"""
    from leaklint.config import Settings
    from leaklint.registry import all_rules

    assert isinstance(settings, Settings)
    known = all_rules()
    enabled = settings.enabled_codes(known)
    return known, [known[code] for code in sorted(enabled)]


def warn_if_nothing_found(paths: Sequence[str], found: object) -> None:
    """Say so when the paths hold no Python file (and none was refused): a run that checks
    nothing must not look like a clean one."""
    if found.files or found.errors:  # type: ignore[attr-defined]
        return
    from leaklint.report._paths import printable

    shown = ", ".join(printable(path) for path in paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    warning(f"no Python files found in {shown}")


def use_color(mode: str, to_terminal: bool) -> bool:
    """Whether to colour: ``--color always|never`` decide; with ``auto`` (the default), ``NO_COLOR``
    turns it off, ``FORCE_COLOR`` (any non-empty value) on, and otherwise only a terminal gets it."""
    if mode != "auto":
        return mode == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return to_terminal


def report_options(output_file: str | None, color: str, show_source: bool, quiet: bool, texts: dict[str, str], *, to_stderr: bool = False):  # type: ignore[no-untyped-def]
    """``color``: ``auto``, ``always`` or ``never`` (see :func:`use_color`)."""
    from leaklint.report import ReportOptions

    stream = sys.stderr if to_stderr else sys.stdout
    to_terminal = output_file is None and stream.isatty()
    return ReportOptions(
        color=use_color(color, to_terminal),
        show_source=show_source,
        quiet=quiet,
        sources=texts,
        src_root=str(Path.cwd()),
    )


def report(result: object, known: dict, output_format: str, options: object, output_file: str | None, *, to_stderr: bool = False) -> bool:
    """Print per-file errors on stderr and the report where it goes; False if it could not be written."""
    from leaklint.report import render

    text = render(output_format, result, known, options)  # type: ignore[arg-type]
    colored = bool(getattr(options, "color", False))
    for error in result.errors:  # type: ignore[attr-defined]
        error_line(error)
    if to_stderr and output_file is None:
        echo_text(text, err=True, color=colored)
        return True
    return _write(text, output_file, color=colored)


def error_line(file_error: object) -> None:
    """A file that could not be linted, one line on stderr."""
    from leaklint.report._paths import printable

    click.echo(printable(file_error.describe()), err=True)  # type: ignore[attr-defined]


def write_report(text: str, output_file: str | None) -> bool:
    """``text`` to standard output or ``output_file``; False (after an error line) if it could not be written."""
    return _write(text, output_file)


def exit_status(result: object, exit_zero: bool) -> int:
    if result.errors:  # type: ignore[attr-defined]
        return EXIT_ERROR
    if result.findings and not exit_zero:  # type: ignore[attr-defined]
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _write(report: str, output_file: str | None, *, color: bool = False) -> bool:
    if output_file is None:
        echo_text(report, color=color)
        return True
    data = report.encode("utf-8")  # before the file is opened: never an empty report left behind
    try:
        Path(output_file).write_bytes(data)
    except OSError as problem:
        error(f"cannot write {output_file}: {problem.strerror or problem}")
        return False
    return True


def echo_text(text: str, *, err: bool = False, color: bool = False) -> None:
    """Print ``text`` as is (``color``: keep its colours even where click would strip them, off a
    terminal); on a terminal whose encoding lacks some character (a Latin-1 locale and a U+FFFD
    in a file name), print that character as ``?`` rather than fail."""
    try:
        click.echo(text, nl=False, err=err, color=True if color else None)
    except UnicodeEncodeError:  # raised before anything was written
        stream = click.get_text_stream("stderr" if err else "stdout")
        stream.flush()
        stream.buffer.write(text.encode(stream.encoding or "utf-8", "replace"))
        stream.buffer.flush()
