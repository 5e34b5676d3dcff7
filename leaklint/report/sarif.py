"""SARIF 2.1.0, the format GitHub code scanning and most review tools ingest.

Choices worth knowing:

* ``tool.driver.rules`` lists every known rule, not just those that fired, so viewers can show rule
  help for any result and ``ruleIndex`` stays meaningful across runs.
* Columns are Python string offsets (code points), so the run declares
  ``columnKind: unicodeCodePoints``; SARIF's ``endColumn`` is exclusive, as is
  :attr:`Finding.end_column`.
* Relative paths are emitted relative to ``%SRCROOT%``, whose absolute URI is only filled in when
  the caller knows it (``ReportOptions.src_root``); code-scanning uploads resolve it themselves.
* ``partialFingerprints["leaklint/v1"]`` hashes the rule, the path, the stripped text of the line
  (the line number only when the source is not available) and the occurrence index of that same key
  in the file (:mod:`leaklint.fingerprints`, which the baseline shares). Adding or removing unrelated lines above a finding therefore keeps its fingerprint,
  which is what lets code scanning track an alert across commits instead of closing and reopening it.
* With a baseline (``--baseline``), a result is ``baselineState: new``, and the findings the
  baseline hides are results too, ``unchanged`` and suppressed (``kind: external``).
* File errors become ``toolExecutionNotifications`` and make ``executionSuccessful`` false.
* A file name that is not UTF-8 keeps its bytes in the URI, percent-encoded (``tr%FFain.py``);
  texts show such a byte as U+FFFD (:mod:`leaklint.report._paths`).
* In a Jupyter notebook the artifact is the ``.ipynb`` file, so a region is where the code is in
  that file: the line of its JSON that holds the cell's line, the column counting the JSON
  spelling (``leaklint.notebook.FilePositions``); a viewer showing the region shows the code. The
  cell and the position within it are in ``properties`` (``cell``, ``cellRegion``: 1-based, every
  cell counted, as the text and JSON formats give them), and the message starts with
  ``Cell 3, line 2:``. A fix replacement is an edit of the file's text too (its inserted text
  escaped as the file's JSON spells it), so applying a fix's replacements to the ``.ipynb`` file
  gives what ``--fix`` writes, and each replacement names its ``cell``. Where the notebook's text
  is not known, a result points at the whole file. The fingerprint's anchor is the text of the
  cell's line, so it survives cells being added above.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Iterable, Mapping
from urllib.parse import quote

from leaklint.findings import Severity
from leaklint.report._paths import printable, raw_bytes
from leaklint.report._source import SourceLines

if TYPE_CHECKING:
    from leaklint.findings import FileError, Finding, LintResult
    from leaklint.notebook import FilePositions
    from leaklint.report import ReportOptions
    from leaklint.rule import Rule

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/leaklint/leaklint"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "leaklint/v1"

_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[/\\]")


def render(result: LintResult, rules: Mapping[str, type[Rule]], options: ReportOptions) -> str:
    """Render the run as an indented SARIF 2.1.0 log with a single run."""
    return json.dumps(sarif_log(result, rules, options), indent=2) + "\n"


def sarif_log(result: LintResult, rules: Mapping[str, type[Rule]], options: ReportOptions) -> dict[str, Any]:
    """The SARIF log as plain data (what :func:`render` serialises)."""
    rule_index = {code: index for index, code in enumerate(rules)}
    src_root: dict[str, Any] = {"uri": _directory_uri(options.src_root)} if options.src_root else {}
    src_root["description"] = {"text": "The directory leaklint was run in."}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "leaklint",
                "version": options.tool_version,
                "informationUri": INFORMATION_URI,
                "rules": [_rule_descriptor(rule) for rule in rules.values()],
            }
        },
        "originalUriBaseIds": {SRCROOT: src_root},
        "columnKind": "unicodeCodePoints",
        "invocations": [
            {
                "executionSuccessful": not result.errors,
                "toolExecutionNotifications": [_notification(error, rule_index) for error in result.errors],
            }
        ],
        "results": list(_results(result, options, rule_index, rules)),
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _level(severity: Severity | str) -> str:
    """Leaks and peaks threaten the job (``warning``); perf and hygiene findings are only ``note``."""
    return "note" if Severity(severity) in (Severity.PERF, Severity.HYGIENE) else "warning"


def _rule_descriptor(rule: type[Rule]) -> dict[str, Any]:
    severity = Severity(rule.severity)
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.summary},
        "help": {"text": rule.docs, "markdown": rule.docs},
        "defaultConfiguration": {"level": _level(severity), "enabled": bool(rule.default_enabled)},
        "properties": {"severity": str(severity), "tags": _tags(severity), **_runtime(rule)},
    }


def _runtime(rule: type[Rule] | None) -> dict[str, str]:
    """The command that measures the rule's repro (``leaklint verify LL101``), when it has one."""
    return {"runtime": f"leaklint verify {rule.code}"} if rule is not None and rule.has_repro() else {}


def _tags(severity: Severity) -> list[str]:
    """Tags code-scanning UIs filter by: the area, then leaklint's own severity."""
    area = "performance" if severity is Severity.PERF else "memory"
    return ["pytorch", area, str(severity)]


def _results(
    result: LintResult, options: ReportOptions, rule_index: Mapping[str, int], rules: Mapping[str, type[Rule]]
) -> Iterable[dict[str, Any]]:
    """Every finding as a result; with a baseline, the findings it hides too, as ``unchanged`` and
    suppressed (code scanning closes them), the others as ``new``. Fingerprints are counted over
    both, so they are the same with and without the baseline."""
    from leaklint.findings import Finding
    from leaklint.fingerprints import fingerprints

    source_lines = SourceLines(options.sources)
    hidden = set(options.baselined)
    everything = sorted([*result.findings, *options.baselined], key=Finding.sort_key)
    for finding, print_ in fingerprints(everything, source_lines):
        sarif_result = _result(finding, print_, rule_index, source_lines, rules)
        if options.baseline_applied:
            sarif_result["baselineState"] = "unchanged" if finding in hidden else "new"
            if finding in hidden:
                sarif_result["suppressions"] = [{"kind": "external", "justification": "recorded in the leaklint baseline"}]
        yield sarif_result


def _result(
    finding: Finding, print_: str, rule_index: Mapping[str, int], source_lines: SourceLines, rules: Mapping[str, type[Rule]]
) -> dict[str, Any]:
    result: dict[str, Any] = {"ruleId": finding.code}
    if finding.code in rule_index:
        result["ruleIndex"] = rule_index[finding.code]
    message = printable(f"{finding.message} Help: {finding.help}" if finding.help else finding.message)
    if finding.cell is not None:
        message = f"Cell {finding.cell}, line {finding.line}: {message}"
    region = _region(finding.line, finding.column, finding.end_line, finding.end_column)
    positions = source_lines.file_positions(finding.path) if finding.cell is not None else None
    physical: dict[str, Any] = {"artifactLocation": _artifact_location(finding.path)}
    if finding.cell is None:
        physical["region"] = region
    else:
        in_file = _file_region(positions, finding.cell, region)
        if in_file is not None:
            physical["region"] = in_file
    result.update(
        {
            "level": _level(finding.severity),
            "message": {"text": message},
            "locations": [{"physicalLocation": physical}],
            "partialFingerprints": {FINGERPRINT_KEY: print_},
            "properties": {
                **({"cell": finding.cell, "cellRegion": region} if finding.cell is not None else {}),
                "confidence": str(finding.confidence),
                "severity": str(finding.severity),
                **_runtime(rules.get(finding.code)),
            },
        }
    )
    if finding.fix is not None:
        result["properties"]["fixApplicability"] = str(finding.fix.applicability)
        sarif_fix = _fix(finding, positions)
        if sarif_fix is not None:
            result["fixes"] = [sarif_fix]
    return result


def _region(line: int, column: int, end_line: int, end_column: int) -> dict[str, int]:
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _file_region(positions: FilePositions | None, cell: int, region: Mapping[str, int]) -> dict[str, int] | None:
    """A region counted within notebook cell ``cell`` as a region of the ``.ipynb`` file's text."""
    if positions is None:
        return None
    start = positions.position(cell, region["startLine"], region["startColumn"])
    end = positions.position(cell, region["endLine"], region["endColumn"])
    if start is None or end is None:
        return None
    return _region(*start, *end)


def _fix(finding: Finding, positions: FilePositions | None) -> dict[str, Any] | None:
    """The finding's fix as a SARIF ``fix``: one artifact change with its replacements (in a
    notebook, edits of the file's JSON text; None when the notebook's text is not known)."""
    fix = finding.fix
    assert fix is not None
    replacements = []
    for edit in fix.edits:
        region = _region(edit.line, edit.column, edit.end_line, edit.end_column)
        inserted = edit.replacement
        if edit.cell is not None:
            in_file = _file_region(positions, edit.cell, region)
            if in_file is None or positions is None:
                return None
            region, inserted = in_file, positions.escaped(inserted)
        replacements.append(
            {
                "deletedRegion": region,
                "insertedContent": {"text": inserted},
                **({"properties": {"cell": edit.cell}} if edit.cell is not None else {}),
            }
        )
    return {
        "description": {"text": f"{fix.title} ({fix.applicability})"},
        "artifactChanges": [{"artifactLocation": _artifact_location(finding.path), "replacements": replacements}],
    }


def _notification(error: FileError, rule_index: Mapping[str, int]) -> dict[str, Any]:
    notification: dict[str, Any] = {
        "level": "error",
        "message": {"text": printable(error.reason)},
        "locations": [{"physicalLocation": {"artifactLocation": _artifact_location(error.path)}}],
        "descriptor": {"id": str(error.kind)},
    }
    if error.rule:
        notification["associatedRule"] = {"id": error.rule}
        if error.rule in rule_index:
            notification["associatedRule"]["index"] = rule_index[error.rule]
    return notification


def _is_absolute(path: str) -> bool:
    return path.startswith("/") or bool(_WINDOWS_DRIVE.match(path))


def _artifact_location(path: str) -> dict[str, str]:
    """A relative path becomes a relative URI under ``%SRCROOT%``; an absolute one a ``file:`` URI."""
    path = path.replace("\\", "/")
    if _is_absolute(path):
        return {"uri": _file_uri(path)}
    while path.startswith("./"):
        path = path[2:]
    return {"uri": quote(raw_bytes(path)), "uriBaseId": SRCROOT}


def _file_uri(absolute: str) -> str:
    absolute = absolute.replace("\\", "/")
    if not absolute.startswith("/"):
        absolute = "/" + absolute  # C:/x -> /C:/x, so the URI reads file:///C:/x
    return "file://" + quote(raw_bytes(absolute), safe="/:")


def _directory_uri(directory: str) -> str:
    uri = _file_uri(directory)
    return uri if uri.endswith("/") else uri + "/"
