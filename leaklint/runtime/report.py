"""``leaklint verify`` output: a table for people, a stable JSON document for tools.

The JSON document (``schema: "leaklint.verify/1"``) has these keys, in this order, and only grows
by adding keys: ``schema``, ``leaklint``, ``torch``, ``device``, ``iterations``, ``warmup``,
``results`` (one object per rule, in code order) and ``summary`` (count per status). A result has
``code``, ``name``, ``severity``, ``device``, ``status`` (``confirmed``, ``not confirmed``,
``skipped`` (tensorflow not installed), ``error`` (the repro raised, or a module it needs such as
psutil or matplotlib is missing), ``no repro``), ``verdict``, ``reason``, ``host_meter`` and ``leaky`` /
``fixed`` (null unless the repro ran), each with integer byte counts ``growth_per_iteration``,
``host_growth_per_iteration`` (null without a host meter), ``peak``, ``held``,
``allocated_per_iteration``, ``seconds_per_iteration``, the series ``live`` and ``host``
(bytes at the end of every iteration, warm-up included) and ``host_held`` (the host meter's
reading after the last step; null without a host meter). Bytes are relative to the moment before
the variant's first step.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Sequence

from leaklint.runtime.driver import RuleResult
from leaklint.runtime.units import format_bytes
from leaklint.runtime.verdict import VariantStats

SCHEMA = "leaklint.verify/1"


def _variant(stats: VariantStats | None) -> dict[str, Any] | None:
    if stats is None:
        return None
    host = stats.host_growth
    return {
        "growth_per_iteration": round(stats.growth),
        "host_growth_per_iteration": None if host is None else round(host),
        "peak": round(stats.peak),
        "held": round(stats.held),
        "allocated_per_iteration": round(stats.allocated_per_iteration),
        "seconds_per_iteration": round(stats.seconds_per_iteration, 6),
        "live": [round(value) for value in stats.live],
        "host": [round(value) for value in stats.host],
        "host_held": None if stats.host_held is None else round(stats.host_held),
    }


def result_to_dict(result: RuleResult) -> dict[str, Any]:
    return {
        "code": result.code,
        "name": result.name,
        "severity": str(result.severity),
        "device": result.device,
        "status": result.status,
        "verdict": result.verdict,
        "reason": result.reason,
        "host_meter": result.host_meter,
        "leaky": _variant(result.leaky),
        "fixed": _variant(result.fixed),
    }


def render_json(results: Sequence[RuleResult], device: str, iterations: int, warmup: int, torch_version: str) -> str:
    from leaklint import __version__

    document = {
        "schema": SCHEMA,
        "leaklint": __version__,
        "torch": torch_version,
        "device": device,
        "iterations": iterations,
        "warmup": warmup,
        "results": [result_to_dict(result) for result in results],
        "summary": dict(sorted(Counter(result.status for result in results).items())),
    }
    return json.dumps(document, indent=2) + "\n"


def _pair(leaky: str, fixed: str) -> str:
    return f"{leaky} / {fixed}"


def verdict_cell(result: RuleResult) -> str:
    """The measured verdict when the rule is confirmed, else the status and why (the reason of an
    unconfirmed rule already says what was measured)."""
    if result.status == "confirmed":
        return result.verdict
    return f"{result.status}: {result.reason}" if result.reason else result.status


def _row(result: RuleResult) -> list[str]:
    leaky, fixed = result.leaky, result.fixed
    if leaky is None or fixed is None:
        return [result.code, result.device, "-", "-", "-", "-", "-", "-", verdict_cell(result)]
    tensors = bool(leaky.live)
    host_l, host_f = leaky.host_growth, fixed.host_growth
    host = _pair(format_bytes(host_l), format_bytes(host_f)) + f" {result.host_meter}" if host_l is not None and host_f is not None else "unavailable"
    return [
        result.code,
        result.device,
        format_bytes(leaky.growth) if tensors else "-",
        format_bytes(fixed.growth) if tensors else "-",
        host,
        _pair(format_bytes(leaky.peak), format_bytes(fixed.peak)) if tensors else "-",
        _pair(format_bytes(leaky.held), format_bytes(fixed.held)) if tensors else _host_held(result),
        _pair(f"{leaky.seconds_per_iteration * 1e3:.2f}", f"{fixed.seconds_per_iteration * 1e3:.2f}"),
        verdict_cell(result),
    ]


def _host_held(result: RuleResult) -> str:
    """The HELD cell of a repro measured on the host only: what the host meter still holds."""
    held_l, held_f = result.leaky.host_held, result.fixed.host_held  # type: ignore[union-attr]
    if held_l is None or held_f is None:
        return "-"
    return _pair(format_bytes(held_l), format_bytes(held_f)) + f" {result.host_meter}"


HEADER = [
    "CODE", "DEVICE", "LEAKY/ITER", "FIXED/ITER", "HOST/ITER LEAKY / FIXED", "PEAK LEAKY / FIXED",
    "HELD LEAKY / FIXED", "MS/ITER LEAKY / FIXED", "VERDICT",
]  # fmt: skip


def render_text(results: Sequence[RuleResult]) -> str:
    """The table: tensor bytes gained per iteration, host bytes, peak, bytes held at the end, step
    time, verdict."""
    rows = [HEADER, *(_row(result) for result in results)]
    widths = [max(len(row[column]) for row in rows) for column in range(len(HEADER) - 1)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1] for row in rows]
    counts = Counter(result.status for result in results)
    summary = ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
    return "\n".join(line.rstrip() for line in lines) + f"\n\n{len(results)} rules: {summary}\n"
