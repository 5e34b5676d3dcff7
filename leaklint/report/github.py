"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request.

Every finding is a ``::warning``, leak severity included. Findings are advisory static-analysis
results (each carries a confidence, and some are false positives); whether the job fails is decided
by leaklint's exit code, not by the annotation level. Rendering leaks as ``::error`` would make the
PR view claim the build failed for a reason the exit code may not agree with.

In a Jupyter notebook GitHub annotates the ``.ipynb`` file as it is stored, its JSON: the
annotation's line and columns are where the code is in that file (the JSON line that holds the
cell's line; ``leaklint.notebook.FilePositions``), and its title names the cell and the line within
it (``LL101 loss-accumulation (cell 3, line 2)``). Where the notebook's text is not known, the
annotation is on the file, with no line.

Files leaklint could not read, parse or fully analyse are emitted as ``::error`` lines after the
findings: those do fail the run (exit code 2), and without an annotation a CI user would only see
them in the raw log.

Escaping follows the GitHub runner's rules (``actions/toolkit`` ``command.ts``): in the message,
``%``, CR and LF are percent-encoded; in property values ``:`` and ``,`` are too, since they
delimit the properties.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from leaklint.report._source import SourceLines

if TYPE_CHECKING:
    from leaklint.findings import FileError, Finding, LintResult
    from leaklint.report import ReportOptions
    from leaklint.rule import Rule


def render(result: LintResult, rules: Mapping[str, type[Rule]], options: ReportOptions) -> str:
    """One workflow command per finding, then one per file error; empty string when neither."""
    source_lines = SourceLines(options.sources)
    lines = [_finding_command(finding, source_lines) for finding in result.findings]
    lines.extend(_error_command(error) for error in result.errors)
    return "".join(line + "\n" for line in lines)


def _finding_command(finding: Finding, source_lines: SourceLines) -> str:
    title = f"{finding.code} {finding.name}"
    where: dict[str, str] = {}
    start, end = (finding.line, finding.column), (finding.end_line, finding.end_column)
    if finding.cell is not None:
        title += f" (cell {finding.cell}, line {finding.line})"
        positions = source_lines.file_positions(finding.path)
        start = positions.position(finding.cell, *start) if positions is not None else None  # type: ignore[assignment]
        end = positions.position(finding.cell, *end) if positions is not None else None  # type: ignore[assignment]
    if start is not None and end is not None:
        where = {"line": str(start[0]), "col": str(start[1]), "endLine": str(end[0]), "endColumn": str(end[1])}
    return _command("warning", {"file": finding.path, **where, "title": title}, finding.message)


def _error_command(error: FileError) -> str:
    reason = f"{error.reason} (rule {error.rule})" if error.rule else error.reason
    return _command("error", {"file": error.path, "title": f"leaklint {error.kind}"}, reason)


def _command(name: str, properties: Mapping[str, str], message: str) -> str:
    props = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    return f"::{name} {props}::{escape_data(message)}"


def escape_data(value: str) -> str:
    """Escape a workflow command's message (the part after the final ``::``)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a property value: as data, plus the ``:`` and ``,`` that delimit properties."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")
