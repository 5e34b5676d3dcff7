"""``assert_no_growth``: the verifier's meter pointed at a user's own training step.

A step that leaks adds about the same bytes every call; ``assert_no_growth`` calls it
``warmup + iterations`` times, takes the median growth of live tensor bytes per call after the
warm-up (so a lazily created optimizer state or cache does not count), and fails with the lines
that allocated the tensors still alive at the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from leaklint.runtime.attribution import Site, cpu_sites, cuda_sites, make_labeler
from leaklint.runtime.tensor_meter import CpuMeter, CudaMeter
from leaklint.runtime.units import format_bytes, parse_size
from leaklint.runtime.verdict import growth_per_iteration


@dataclass(frozen=True)
class GrowthReport:
    """What :func:`assert_no_growth` measured (returned when the step passes)."""

    device: str
    growth_per_iteration: float
    tolerance: float
    iterations: int
    warmup: int
    live: tuple[float, ...]
    sites: tuple[Site, ...]

    def describe(self, top: int = 5) -> str:
        lines = [
            f"step grows {format_bytes(self.growth_per_iteration)}/iter of live {self.device} tensor memory "
            f"(median over {self.iterations} iterations after {self.warmup} warm-up; tolerance {format_bytes(self.tolerance)}/iter)"
        ]
        if self.sites:
            lines.append("retained tensors were allocated at:")
            for site in self.sites[:top]:
                per_iteration = site.bytes / max(self.iterations, 1)
                plural = "" if site.tensors == 1 else "s"
                lines.append(f"  {site.where} grows {format_bytes(per_iteration)}/iter ({site.tensors} tensor{plural})")
        return "\n".join(lines)


def _device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() and torch.cuda.is_initialized() else "cpu"
    return device


def measure_growth(
    step: Callable[[], object], iterations: int = 20, warmup: int = 3, tolerance: str | float = "4 KiB", device: str = "auto"
) -> GrowthReport:
    """Run ``step`` and report its growth and retained allocation sites, without judging."""
    if iterations < 2 or warmup < 1:
        raise ValueError("assert_no_growth needs iterations >= 2 and warmup >= 1")
    limit = parse_size(tolerance)
    on = _device(device)
    if on.startswith("cuda"):
        live, sites = _run_cuda(step, iterations, warmup)
    else:
        live, sites = _run_cpu(step, iterations, warmup)
    growth = growth_per_iteration(live, warmup)
    return GrowthReport(on, growth, limit, iterations, warmup, tuple(live), tuple(sites))


def assert_no_growth(
    step: Callable[[], object], iterations: int = 20, warmup: int = 3, tolerance: str | float = "4 KiB", device: str = "auto"
) -> GrowthReport:
    """Call ``step()`` ``warmup + iterations`` times; raise AssertionError if live tensor bytes grow
    by more than ``tolerance`` per call (median after the warm-up), naming where the retained
    tensors were allocated. ``device``: ``cpu``, ``cuda`` or ``auto`` (CUDA when torch has
    already initialised it, else CPU)."""
    report = measure_growth(step, iterations, warmup, tolerance, device)
    if report.growth_per_iteration > report.tolerance:
        raise AssertionError(report.describe())
    return report


def _run_cpu(step: Callable[[], object], iterations: int, warmup: int) -> tuple[list[float], list[Site]]:
    meter = CpuMeter()
    labeler = make_labeler()
    meter.start()
    try:
        with labeler:
            for index in range(warmup + iterations):
                with meter.iteration(index):
                    step()
    finally:
        series = meter.stop()
    since = meter.iterations[warmup][0] if len(meter.iterations) > warmup else 0
    return series.live, cpu_sites(meter.allocations, since, labeler.sites)


def _run_cuda(step: Callable[[], object], iterations: int, warmup: int) -> tuple[list[float], list[Site]]:
    import torch

    meter = CudaMeter()
    torch.cuda.memory._record_memory_history(max_entries=100_000)
    try:
        meter.start()
        for index in range(warmup):
            with meter.iteration(index):
                step()
        before = torch.cuda.memory._snapshot()
        for index in range(warmup, warmup + iterations):
            with meter.iteration(index):
                step()
        after = torch.cuda.memory._snapshot()
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
    return meter.stop().live, cuda_sites(before, after)
