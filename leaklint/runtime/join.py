"""Static findings joined with what ``leaklint run`` measured on the same script.

Per finding of a ``leak`` rule: **confirmed** (memory grew, and either tensors allocated at lines
that feed the finding's line grew (:mod:`leaklint.runtime.feeds`: the finding keeps them), or
host memory outside tensors grew while its line ran every step: autograd graphs kept alive after
``backward()`` have no tensor bytes to trace back to a line), **not observed** (its line ran,
nothing attributable to it grew over the measured steps) or **not reachable** (its line never ran
before the script was stopped). Findings of ``peak``/``perf`` rules are **not measured**: the run measures growth only.
Growing tensor sites at lines without a finding are **unexplained growth**, and so is host growth
when no finding was confirmed by it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

from leaklint.findings import Finding, Severity
from leaklint.runtime.attribution import Site
from leaklint.runtime.feeds import ProjectSlices
from leaklint.runtime.run import RunResult
from leaklint.runtime.units import format_bytes

CONFIRMED = "confirmed"
NOT_OBSERVED = "not observed"
NOT_REACHABLE = "not reachable"
NOT_MEASURED = "not measured"


@dataclass(frozen=True)
class JoinedFinding:
    finding: Finding
    status: str
    evidence: str


@dataclass(frozen=True)
class Joined:
    findings: tuple[JoinedFinding, ...]
    unexplained_sites: tuple[Site, ...]
    #: Host growth per step (bytes) that no confirmed finding accounts for; None when there is none.
    unexplained_host: float | None


def site_location(site: Site) -> tuple[str, int] | None:
    """``(absolute path, line)`` of a site's ``file:line``; None for the unknown site."""
    where, _, line = site.where.rpartition(":")
    if not where or not line.isdigit():
        return None
    return os.path.abspath(where), int(line)


def join(findings: Sequence[Finding], result: RunResult, slices: ProjectSlices | None = None) -> Joined:
    """Each finding's status against what was measured (see the module docs)."""
    report = result.report
    slices = slices if slices is not None else ProjectSlices(result.lines)
    by_location: dict[tuple[str, int], list[Site]] = {}
    for site in report.sites:
        location = site_location(site)
        if location is not None:
            by_location.setdefault(location, []).append(site)
    measured = f"{report.iterations} measured steps after {result.warmup} warm-up"
    joined = []
    claimed: set[int] = set()
    any_confirmed = False
    for finding in sorted(findings, key=lambda f: (f.path, f.line, f.column, f.code)):
        last = max(finding.end_line, finding.line)
        if finding.severity is not Severity.LEAK:
            joined.append(JoinedFinding(finding, NOT_MEASURED, f"a {finding.severity.value} rule: leaklint run measures growth only"))
            continue
        runs = max(result.runs(finding.path, line) for line in range(finding.line, last + 1))
        if runs == 0:
            joined.append(JoinedFinding(finding, NOT_REACHABLE, f"its line never ran in {result.steps} steps"))
            continue
        if not report.grows:
            joined.append(JoinedFinding(finding, NOT_OBSERVED, f"no growth over {measured}"))
            continue
        feeding = slices.feeding(finding.path, finding.line, last)
        sites = [site for location in sorted(feeding) for site in by_location.get(location, ())]
        if sites:
            any_confirmed = True
            claimed.update(id(site) for site in sites)
            grown = sum(site.bytes for site in sites)
            named = ", ".join(site.where for site in sites[:3]) + (" ..." if len(sites) > 3 else "")
            joined.append(JoinedFinding(finding, CONFIRMED, f"tensors allocated at {named}, which feed this line, grow {format_bytes(grown)}/step"))
        elif report.host_grows and runs >= result.measured_steps:
            any_confirmed = True
            joined.append(JoinedFinding(
                finding, CONFIRMED,
                f"host memory outside tensors grows {format_bytes(report.host_growth_per_iteration or 0)}/step and this line runs every step",
            ))
        else:
            reason = "it did not run every step" if report.host_grows and not sites else "no growing tensors were allocated at lines feeding it"
            joined.append(JoinedFinding(finding, NOT_OBSERVED, f"memory grew, but {reason} ({measured})"))
    unexplained = tuple(site for site in report.sites if report.grows and id(site) not in claimed)
    host = report.host_growth_per_iteration if report.host_grows and not any_confirmed else None
    return Joined(tuple(joined), unexplained, host)


def display_path(path: str) -> str:
    """``path`` relative to the working directory when it is below it (as sites are shown)."""
    relative = os.path.relpath(path) if os.path.isabs(path) else path
    return path if relative.startswith("..") else relative


def render_text(result: RunResult, joined: Joined) -> str:
    report = result.report
    lines = [f"leaklint run {result.script}: {result.steps} steps ({result.boundary} boundaries), {result.warmup} warm-up"]
    lines.append(report.describe())
    if joined.findings:
        lines.append("static findings:")
        for item in joined.findings:
            f = item.finding
            lines.append(f"  {display_path(f.path)}:{f.line}:{f.column}: {f.code} {f.name}: {item.status} ({item.evidence})")
    else:
        lines.append("static findings: none")
    for site in joined.unexplained_sites:
        lines.append(f"unexplained growth: {site.where} grows {format_bytes(site.bytes)}/step (no finding at this line)")
    if joined.unexplained_host is not None:
        lines.append(f"unexplained growth: host memory grows {format_bytes(joined.unexplained_host)}/step and no leak finding ran to explain it")
    return "\n".join(lines) + "\n"


def render_json(result: RunResult, joined: Joined) -> str:
    import json

    report = result.report
    document = {
        "schema": "leaklint.run/1",
        "script": result.script,
        "boundary": result.boundary,
        "steps": result.steps,
        "warmup": result.warmup,
        "linted": sorted(path for path in result.lines if path.endswith(".py")),
        "grows": report.grows,
        "device": report.device,
        "tensor": {"growth_per_step": report.growth_per_iteration, "tolerance": report.tolerance, "grows": report.tensor_grows, "live": list(report.live)},
        "host": {
            "growth_per_step": report.host_growth_per_iteration, "tolerance": report.host_tolerance, "grows": report.host_grows,
            "heap": list(report.host), "unavailable": report.host_unavailable,
        },
        "sites": [{"where": s.where, "bytes_per_step": s.bytes, "tensors_per_step": s.tensors} for s in report.sites],
        "findings": [
            {"path": j.finding.path, "line": j.finding.line, "column": j.finding.column, "code": j.finding.code,
             "name": j.finding.name, "severity": j.finding.severity.value, "status": j.status, "evidence": j.evidence}
            for j in joined.findings
        ],
        "unexplained": [{"where": s.where, "bytes_per_step": s.bytes} for s in joined.unexplained_sites]
        + ([{"where": "host memory", "bytes_per_step": joined.unexplained_host}] if joined.unexplained_host is not None else []),
    }
    return json.dumps(document, indent=2) + "\n"
