"""Findings and file errors as LSP diagnostics.

A finding keeps what ``leaklint check`` prints: the rule's code (linked to the rules table, since
the project publishes no page per rule; the hover shows the rule's whole page), its severity and
confidence, its message and its hint. Leaks and peaks are warnings and perf findings information,
the levels the SARIF report gives them. A file that cannot be linted (a syntax error while typing,
a broken config) gets one diagnostic that says so, where the problem is when the reason names a
position, and is otherwise left alone: no traceback ever reaches the client.
"""

from __future__ import annotations

import re

from lsprotocol import types

from leaklint.findings import ErrorKind, FileError, Finding, Severity
from leaklint.report.sarif import INFORMATION_URI
from leaklint.server.positions import LineIndex

SOURCE = "leaklint"
#: Where the rules are documented on the web: the README's rules table.
RULES_URL = f"{INFORMATION_URI}#what-it-finds"
_POSITION = re.compile(r"\bat (?:cell (\d+):)?(\d+):(\d+)")


def rule_url(code: str) -> str:
    """The page a diagnostic's code links to (``codeDescription.href``)."""
    return RULES_URL


def lsp_range(index: LineIndex, start: int, end: int) -> types.Range:
    """The range of character offsets ``[start, end)`` of ``index``'s text."""
    (line, character), (end_line, end_character) = index.position(start), index.position(end)
    return types.Range(types.Position(line, character), types.Position(end_line, end_character))


def finding_range(index: LineIndex, finding: Finding) -> types.Range:
    """Where ``finding`` is (its lines and columns are within ``index``'s text: a file or a cell)."""
    start = index.offset(finding.line, finding.column)
    end = max(index.offset(finding.end_line, finding.end_column), start)
    return lsp_range(index, start, end)


def finding_diagnostic(index: LineIndex, finding: Finding) -> types.Diagnostic:
    severity = types.DiagnosticSeverity.Information if finding.severity is Severity.PERF else types.DiagnosticSeverity.Warning
    fix = ""
    if finding.fix is not None:
        fix = f"\nfix ({finding.fix.applicability}): {finding.fix.title}"
    return types.Diagnostic(
        range=finding_range(index, finding),
        message=f"{finding.message} [{finding.severity}, {finding.confidence} confidence]\nhelp: {finding.help}{fix}",
        severity=severity,
        code=finding.code,
        code_description=types.CodeDescription(href=rule_url(finding.code)),
        source=SOURCE,
        data={
            "name": finding.name,
            "severity": str(finding.severity),
            "confidence": str(finding.confidence),
            "fix": str(finding.fix.applicability) if finding.fix is not None else None,
        },
    )


def error_cell(error: FileError) -> int | None:
    """The notebook cell an error's reason names (``at cell 3:2:5``), if any."""
    match = _POSITION.search(error.reason)
    return int(match.group(1)) if match and match.group(1) else None


def error_diagnostic(index: LineIndex, error: FileError) -> types.Diagnostic:
    """The one diagnostic that says why (part of) a document was not linted."""
    match = _POSITION.search(error.reason)
    offset = 0
    if match is not None:
        offset = index.offset(int(match.group(2)), int(match.group(3)))
    line, character = index.position(offset)
    where = types.Range(types.Position(line, character), types.Position(line, character))
    severity = types.DiagnosticSeverity.Error if error.reason.startswith("configuration error") else types.DiagnosticSeverity.Information
    if error.kind is ErrorKind.INTERNAL:
        severity = types.DiagnosticSeverity.Warning
    rule = f" (rule {error.rule})" if error.rule else ""
    return types.Diagnostic(range=where, message=f"leaklint{rule}: not linted: {error.reason}", severity=severity, source=SOURCE)
