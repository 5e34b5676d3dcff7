"""Static findings joined with what ``leaklint run`` measured on the same script.

Per finding of a ``leak`` rule: **confirmed** (memory grew, and either tensors allocated at lines
that feed the finding's line grew (:mod:`leaklint.runtime.feeds`: the finding keeps them), or
host memory outside tensors grew while its line ran every step: autograd graphs kept alive after
``backward()`` have no tensor bytes to trace back to a line), **not observed** (its line ran,
nothing attributable to it grew over the measured steps) or **not reachable** (its line never ran
before the script was stopped). Findings of ``peak``/``perf`` rules are **not measured** (the run measures growth only), unless
tensors allocated on lines feeding them grow: then they are confirmed as kept, more than the
peak they claim (a forward without ``no_grad`` whose outputs are stored). Findings
of rules whose memory is the DataLoader workers' (LL302) are judged by the workers meter alone
(``--workers``; turned on by itself when the script has such a finding).
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
from leaklint.runtime.run import RunResult, WorkersGrowth
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


def workers_rules() -> frozenset[str]:
    """Codes of the rules whose leak lives in DataLoader workers (their repro measures the
    workers' private memory): only the workers meter can confirm them."""
    from leaklint.registry import all_rules

    return frozenset(code for code, rule in all_rules().items() if rule.has_repro() and rule.Repro.host_meter == "uss")


def _judged_by_workers(finding: Finding, workers: WorkersGrowth | None, measured: str) -> JoinedFinding:
    if workers is None or workers.growth_per_step is None:
        why = workers.unavailable if workers is not None and workers.unavailable else "run with --workers to measure it"
        return JoinedFinding(finding, NOT_MEASURED, f"its memory is the DataLoader workers': {why}")
    if workers.grows:
        return JoinedFinding(finding, CONFIRMED, f"the DataLoader workers' private memory grows {format_bytes(workers.growth_per_step)}/step")
    return JoinedFinding(finding, NOT_OBSERVED, f"the DataLoader workers' private memory stays within {format_bytes(workers.tolerance)}/step ({measured})")


def join(findings: Sequence[Finding], result: RunResult, slices: ProjectSlices | None = None, worker_codes: frozenset[str] | None = None) -> Joined:
    """Each finding's status against what was measured (see the module docs)."""
    report = result.report
    worker_codes = workers_rules() if worker_codes is None else worker_codes
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
        leak = finding.severity is Severity.LEAK
        not_measured = f"a {finding.severity.value} rule: leaklint run measures growth only"
        if finding.severity is Severity.HYGIENE:
            joined.append(JoinedFinding(finding, NOT_MEASURED, not_measured))
            continue
        runs = max(result.runs(finding.path, line) for line in range(finding.line, last + 1))
        if runs == 0:
            joined.append(JoinedFinding(finding, NOT_REACHABLE, f"its line never ran in {result.steps} steps"))
            continue
        if finding.code in worker_codes:
            joined.append(_judged_by_workers(finding, result.workers, measured))
            any_confirmed = any_confirmed or joined[-1].status == CONFIRMED
            continue
        if not report.grows:
            joined.append(JoinedFinding(finding, NOT_OBSERVED, f"no growth over {measured}") if leak else JoinedFinding(finding, NOT_MEASURED, not_measured))
            continue
        feeding = slices.feeding(finding.path, finding.line, last)
        sites = [site for location in sorted(feeding) for site in by_location.get(location, ())]
        if sites:
            # A peak rule's forward whose tensors are measured to pile up is kept, not only a peak.
            any_confirmed = True
            claimed.update(id(site) for site in sites)
            grown = sum(site.bytes for site in sites)
            named = ", ".join(site.where for site in sites[:3]) + (" ..." if len(sites) > 3 else "")
            kept = "" if leak else " (kept across steps: more than the peak this rule claims)"
            joined.append(JoinedFinding(finding, CONFIRMED, f"tensors allocated at {named}, which feed this line, grow {format_bytes(grown)}/step{kept}"))
        elif not leak:
            joined.append(JoinedFinding(finding, NOT_MEASURED, not_measured))
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
    described = report.describe().split("\n")
    workers = result.workers
    if workers is not None and workers.grows:
        grown = f"{format_bytes(workers.growth_per_step or 0)}/iter of DataLoader workers' private memory"
        if report.grows:
            described[0] = described[0].replace("step grows ", f"step grows {grown} and ", 1)
        else:
            described[0] = described[0].replace("step stays within its tolerances", f"step grows {grown}", 1)
    if workers is not None:
        if workers.unavailable:
            meter = f"  DataLoader workers: not measured, {workers.unavailable}"
        elif workers.growth_per_step is None:
            meter = "  DataLoader workers: no reading"
        else:
            mark = "  <- grows" if workers.grows else ""
            meter = f"  DataLoader workers (private memory of child processes): {format_bytes(workers.growth_per_step)}/iter, tolerance {format_bytes(workers.tolerance)}/iter{mark}"
        described.insert(3, meter)
        if workers.grows:
            described.insert(4, (
                "workers' memory growing is typically copy-on-write copies of a dataset held in Python objects (lists, dicts): "
                "keep it in numpy arrays or tensors, or read it from disk in __getitem__"
            ))
    lines.extend(described)
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
        "grows": result.grows,
        "device": report.device,
        "tensor": {"growth_per_step": report.growth_per_iteration, "tolerance": report.tolerance, "grows": report.tensor_grows, "live": list(report.live)},
        "host": {
            "growth_per_step": report.host_growth_per_iteration, "tolerance": report.host_tolerance, "grows": report.host_grows,
            "heap": list(report.host), "unavailable": report.host_unavailable,
        },
        "workers": None if result.workers is None else {
            "growth_per_step": result.workers.growth_per_step, "tolerance": result.workers.tolerance, "grows": result.workers.grows,
            "uss": list(result.workers.readings), "unavailable": result.workers.unavailable,
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
