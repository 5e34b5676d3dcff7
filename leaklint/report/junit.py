"""JUnit XML, for CI systems that show test reports (Jenkins, GitLab's test report, Azure).

One ``testsuite`` per file with findings, one failed ``testcase`` per finding, laid out as Ruff's
``junit`` format: the case's name is ``leaklint.LL101``, its class name the file, and the failure
says where (``line 10, col 9`` or ``cell 3, line 2, col 1``) and what. A run without findings is
one passing case, so a report is never empty. Files that could not be linted are ``error`` cases.
"""

from __future__ import annotations

from itertools import groupby
from typing import TYPE_CHECKING, Mapping
from xml.etree import ElementTree

from leaklint.report._paths import printable

if TYPE_CHECKING:
    from leaklint.findings import Finding, LintResult
    from leaklint.report import ReportOptions
    from leaklint.rule import Rule


def render(result: LintResult, rules: Mapping[str, type[Rule]], options: ReportOptions) -> str:
    """The findings as a JUnit ``testsuites`` document."""
    failures, errors = len(result.findings), len(result.errors)
    root = ElementTree.Element("testsuites", name="leaklint", tests=str(max(1, failures + errors)), failures=str(failures), errors=str(errors))
    for path, in_file in groupby(result.findings, key=lambda finding: finding.path):
        findings = list(in_file)
        suite = ElementTree.SubElement(root, "testsuite", name=printable(path), tests=str(len(findings)), failures=str(len(findings)), errors="0")
        for finding in findings:
            case = ElementTree.SubElement(suite, "testcase", name=f"leaklint.{finding.code}", classname=printable(path), line=str(finding.line), column=str(finding.column))
            failure = ElementTree.SubElement(case, "failure", message=finding.message)
            failure.text = f"{_where(finding)}, {finding.code} {finding.message}"
    if result.errors:
        suite = ElementTree.SubElement(root, "testsuite", name="files not linted", tests=str(errors), failures="0", errors=str(errors))
        for error in result.errors:
            case = ElementTree.SubElement(suite, "testcase", name=f"leaklint.{error.kind}", classname=printable(error.path))
            ElementTree.SubElement(case, "error", message=printable(error.reason)).text = printable(error.describe())
    if not failures and not errors:
        suite = ElementTree.SubElement(root, "testsuite", name="leaklint", tests="1", failures="0", errors="0")
        ElementTree.SubElement(suite, "testcase", name="leaklint", classname="leaklint")
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def _where(finding: Finding) -> str:
    place = f"line {finding.line}, col {finding.column}"
    return f"cell {finding.cell}, {place}" if finding.cell is not None else place
