"""The human format (the default): one ``path:line:col: CODE [severity, confidence] message`` line
per finding, e.g. ``train.py:42:9: LL101 [leak, high confidence] 'loss' is accumulated ...``
(``path:cell N:line:col: ...`` in a Jupyter notebook, the line counted within cell N).

The location prefix is the one editors and terminals already recognise as a link (the same shape as
Ruff, flake8 and compilers), and the ``help:`` line carries the fix hint. ``--show-source`` adds the
offending line with carets, Ruff style, for people reading the output without an editor at hand.

File errors are not printed here: the CLI reports them on stderr (see
:meth:`~leaklint.findings.FileError.describe`). The summary only mentions that some files could not
be checked, so a run with errors never claims "All checks passed!", and neither does a run that
found no file to check.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Callable, Mapping

import click

from leaklint.findings import Applicability, Finding, Severity
from leaklint.report._source import SourceLines

if TYPE_CHECKING:
    from leaklint.findings import LintResult
    from leaklint.report import ReportOptions
    from leaklint.rule import Rule

_SEVERITY_COLOR = {Severity.LEAK: "red", Severity.PEAK: "yellow", Severity.PERF: "cyan", Severity.HYGIENE: "magenta"}

Style = Callable[..., str]


def _plain(text: str, **_: object) -> str:
    return text


def render(result: LintResult, rules: Mapping[str, type[Rule]], options: ReportOptions) -> str:
    """Render the findings as terminal text (see the module docstring for the layout)."""
    style: Style = click.style if options.color else _plain
    lines: list[str] = []
    source_lines = SourceLines(options.sources)

    for finding in result.findings:
        lines.append(_headline(finding, style))
        if options.quiet or options.concise:
            continue
        if options.show_source:
            lines.extend(_snippet(finding, source_lines.get(finding.path, finding.line, finding.cell), style))
        if finding.help:
            lines.append(f"    {style('help', fg='green', bold=True)}: {finding.help}")
        if finding.fix is not None:
            lines.append(f"    {style('fix', fg='cyan', bold=True)} ({finding.fix.applicability}): {finding.fix.title}")
        if options.show_source:
            lines.append("")  # a blank line between blocks, as Ruff does

    if not options.quiet:
        lines.append(_summary(result, len(options.baselined)))
    return "\n".join(lines) + "\n" if lines else ""


def location(path: str, line: int, column: int, cell: int | None = None) -> str:
    """``train.py:12:9``, or in a notebook ``train.ipynb:cell 3:2:5`` (line 2 of cell 3, as Ruff
    writes it); ``path`` may be styled."""
    return f"{path}:cell {cell}:{line}:{column}" if cell is not None else f"{path}:{line}:{column}"


def _headline(finding: Finding, style: Style) -> str:
    color = _SEVERITY_COLOR.get(finding.severity)
    label = f"[{finding.severity}, {finding.confidence} confidence]"
    return (
        f"{location(style(finding.path, bold=True), finding.line, finding.column, finding.cell)}: "
        f"{style(finding.code, fg=color, bold=True)} {style(label, fg=color)} {finding.message}"
    )


def _snippet(finding: Finding, source: str | None, style: Style) -> list[str]:
    """The source line in a ``N |`` gutter and a caret line under the finding's columns.

    Carets run from ``column`` to ``end_column`` (exclusive), or to the end of the line when the
    finding spans several lines. The caret line copies tabs from the source line so the carets stay
    aligned however wide the terminal's tabs are; wide (East Asian) characters count as two columns.
    """
    if source is None:
        return []
    number = str(finding.line)
    gutter = style(" " * len(number) + " |", fg="blue", bold=True)
    start = max(finding.column - 1, 0)
    if finding.end_line == finding.line and finding.end_column > finding.column:
        end = finding.end_column - 1
    else:
        end = len(source)
    indent = "".join(_blank(char) for char in source[:start]) + " " * max(start - len(source), 0)
    width = max(sum(_width(char) for char in source[start:end]), 1)
    carets = style("^" * width, fg=_SEVERITY_COLOR.get(finding.severity), bold=True)
    return [
        f"{style(number + ' |', fg='blue', bold=True)} {source}".rstrip(),
        f"{gutter} {indent}{carets}",
    ]


def _blank(char: str) -> str:
    """What to print under ``char`` so the next column lines up: a tab stays a tab."""
    return "\t" if char == "\t" else " " * _width(char)


def _width(char: str) -> int:
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _summary(result: LintResult, baselined: int = 0) -> str:
    unchecked = len({error.path for error in result.errors})
    trailer = f"; {_plural(unchecked, 'file')} could not be fully checked" if unchecked else ""
    if baselined:
        trailer += f"; {_plural(baselined, 'more finding')} recorded in the baseline"
    if not result.findings:
        if unchecked or baselined:
            return f"No new findings{trailer}" if baselined else f"No findings{trailer}"
        return "All checks passed!" if result.files_checked else "No Python files found: nothing was checked"
    counts = {severity: 0 for severity in Severity}
    for finding in result.findings:
        counts[Severity(finding.severity)] += 1
    breakdown = ", ".join(f"{count} {severity}" for severity, count in counts.items() if count)
    files = _plural(result.files_with_findings, "file")
    return f"Found {_plural(len(result.findings), 'finding')} ({breakdown}) in {files}{trailer}{_fixable(result)}"


def _fixable(result: LintResult) -> str:
    """``; 2 fixable with --fix (1 more with --unsafe-fixes)``, or nothing."""
    kinds = [f.fix.applicability for f in result.findings if f.fix is not None]
    safe = sum(kind is Applicability.SAFE for kind in kinds)
    unsafe = sum(kind is Applicability.UNSAFE for kind in kinds)
    if not safe and not unsafe:
        return ""
    parts = [f"{safe} fixable with --fix"] if safe else []
    if unsafe:
        parts.append(f"{unsafe} {'more ' if safe else 'fixable '}with --unsafe-fixes")
    return f"; {parts[0]}" + (f" ({parts[1]})" if len(parts) > 1 else "")


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
