"""Static findings joined with what ``leaklint run`` measured on the same script.

Per finding of a ``leak`` rule: **confirmed** (memory grew, and either tensors allocated at its
line grew, or host memory outside tensors grew while its line ran: autograd graphs kept alive
have no tensor bytes to trace back to a line), **not observed** (its line ran, nothing attributable
to it grew over the measured steps) or **not reachable** (its line never ran before the script was
stopped). Findings of ``peak``/``perf`` rules are **not measured**: the run measures growth only.
Growing tensor sites at lines without a finding are **unexplained growth**, and so is host growth
when no finding was confirmed by it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

from leaklint.findings import Finding, Severity
from leaklint.runtime.attribution import Site
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


def join(findings: Sequence[Finding], result: RunResult) -> Joined:
    report = result.report
    script = os.path.abspath(result.script)
    by_line: dict[int, list[Site]] = {}
    for site in report.sites:
        location = site_location(site)
        if location is not None and location[0] == script:
            by_line.setdefault(location[1], []).append(site)
    measured = f"{report.iterations} measured steps after {result.warmup} warm-up"
    joined = []
    explained_lines: set[int] = set()
    host_explained = False
    for finding in sorted(findings, key=lambda f: (f.line, f.column, f.code)):
        lines = range(finding.line, max(finding.end_line, finding.line) + 1)
        if finding.severity is not Severity.LEAK:
            joined.append(JoinedFinding(finding, NOT_MEASURED, f"a {finding.severity.value} rule: leaklint run measures growth only"))
            continue
        ran = result.lines.get(os.path.abspath(finding.path), set())
        if not any(line in ran for line in lines):
            joined.append(JoinedFinding(finding, NOT_REACHABLE, f"its line never ran in {result.steps} steps"))
            continue
        sites = [site for line in lines for site in by_line.get(line, ())]
        if sites and report.grows:
            explained_lines.update(line for line in lines if line in by_line)
            grown = sum(site.bytes for site in sites)
            joined.append(JoinedFinding(finding, CONFIRMED, f"tensors allocated here grow {format_bytes(grown)}/step"))
        elif report.host_grows:
            host_explained = True
            joined.append(JoinedFinding(
                finding, CONFIRMED,
                f"host memory outside tensors grows {format_bytes(report.host_growth_per_iteration or 0)}/step while this line runs",
            ))
        else:
            joined.append(JoinedFinding(finding, NOT_OBSERVED, f"no growth attributable to it over {measured}"))
    unexplained = tuple(
        site for site in report.sites
        if report.grows and (site_location(site) is None or site_location(site)[0] != script or site_location(site)[1] not in explained_lines)  # type: ignore[index]
    )
    host = report.host_growth_per_iteration if report.host_grows and not host_explained else None
    return Joined(tuple(joined), unexplained, host)


def render_text(result: RunResult, joined: Joined) -> str:
    report = result.report
    lines = [f"leaklint run {result.script}: {result.steps} steps ({result.boundary} boundaries), {result.warmup} warm-up"]
    lines.append(report.describe())
    if joined.findings:
        lines.append("static findings:")
        for item in joined.findings:
            f = item.finding
            lines.append(f"  {f.path}:{f.line}:{f.column}: {f.code} {f.name}: {item.status} ({item.evidence})")
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
