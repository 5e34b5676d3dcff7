"""``assert_no_growth``: the verifier's meters pointed at a user's own training step.

A step that leaks adds about the same bytes every call. ``assert_no_growth`` watches two meters,
each judged by the median growth per call after the warm-up (so a lazily created optimizer state
or cache does not count) against its own tolerance:

* **live tensor memory** (``tolerance``, default 4 KiB/iter): the CPU allocator's reports or the
  CUDA allocator's counters, exact to the byte;
* **host memory** (``host_tolerance``, default 1 KiB/iter): bytes in glibc's malloc heap
  (``mallinfo2``) minus the CPU tensor storage counted above. Autograd graph nodes live there: the
  PyTorch FAQ's ``total_loss += loss`` after ``backward()`` keeps 0 tensor bytes (backward freed
  the saved activations) while every step's graph nodes pile up, 3.2 KiB/iter for a single
  ``nn.Linear`` and ~7 KiB/iter for a 3-layer MLP.

Why 1 KiB: on repeated identical clean steps (SGD, Adam and AdamW steps on MLP, LSTM and conv
models, a ``no_grad`` evaluation, steps that log ``loss.item()`` into lists and dicts) the median
heap change per step measured 0 to 16 bytes, five runs each, on 1 and 2 threads; the smallest
autograd graph kept per step measured 3.2 KiB. 1 KiB sits 64x above that noise and 3x below the
smallest graph. ``host_tolerance=None`` turns the host check off.

The two meters run in separate passes (``warmup + iterations`` calls each, so the step is called
twice that many times): the profiler that counts CPU tensor bytes and the labeler that names
allocation sites allocate host memory themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from leaklint.runtime.attribution import Site, cpu_sites, cuda_sites, make_labeler
from leaklint.runtime.host_meter import HeapMeter
from leaklint.runtime.tensor_meter import CpuMeter, CudaMeter
from leaklint.runtime.units import format_bytes, parse_size
from leaklint.runtime.verdict import growth_per_iteration

DEFAULT_TOLERANCE = "4 KiB"
DEFAULT_HOST_TOLERANCE = "1 KiB"


@dataclass(frozen=True)
class GrowthReport:
    """What :func:`assert_no_growth` measured (returned when the step passes).

    ``growth_per_iteration``/``live``: tensor bytes; ``host_growth_per_iteration``: host heap
    bytes outside tensor storage (None when not measured: ``host_unavailable`` says why);
    ``host``: the raw heap readings (tensor storage included on the CPU).
    """

    device: str
    growth_per_iteration: float
    tolerance: float
    iterations: int
    warmup: int
    live: tuple[float, ...]
    sites: tuple[Site, ...]
    host_growth_per_iteration: float | None = None
    host_tolerance: float | None = None
    host: tuple[float, ...] = ()
    host_unavailable: str | None = None

    @property
    def tensor_grows(self) -> bool:
        return self.growth_per_iteration > self.tolerance

    @property
    def host_grows(self) -> bool:
        host, limit = self.host_growth_per_iteration, self.host_tolerance
        return host is not None and limit is not None and host > limit

    @property
    def grows(self) -> bool:
        return self.tensor_grows or self.host_grows

    def describe(self, top: int = 5) -> str:
        tensor_name = f"live {self.device} tensor memory"
        host_name = "host memory"
        growing = []
        if self.tensor_grows:
            growing.append(f"{format_bytes(self.growth_per_iteration)}/iter of {tensor_name}")
        if self.host_grows:
            growing.append(f"{format_bytes(self.host_growth_per_iteration or 0)}/iter of {host_name}")
        window = f"(median over {self.iterations} iterations after {self.warmup} warm-up)"
        head = f"step grows {' and '.join(growing)} {window}" if growing else f"step stays within its tolerances {window}"
        lines = [head, self._meter_line(tensor_name, self.growth_per_iteration, self.tolerance, self.tensor_grows)]
        if self.host_unavailable:
            lines.append(f"  {host_name}: not measured, {self.host_unavailable}")
        elif self.host_growth_per_iteration is None or self.host_tolerance is None:
            lines.append(f"  {host_name}: not checked (host_tolerance=None)")
        else:
            lines.append(self._meter_line(f"{host_name} (malloc heap outside tensor storage)", self.host_growth_per_iteration, self.host_tolerance, self.host_grows))
        if self.host_grows and not self.tensor_grows:
            lines.append(
                "host memory growing while tensor memory stays flat is typically autograd graphs kept alive after "
                "backward() freed their tensors: store loss.item() or loss.detach() instead of the tensor"
            )
        if self.sites and self.grows:
            holds = " (each may hold its autograd graph)" if not self.tensor_grows else ""
            lines.append(f"tensors that accumulate{holds} were allocated at:")
            for site in self.sites[:top]:
                count = round(site.tensors)
                plural = "" if count == 1 else "s"
                lines.append(f"  {site.where} grows {format_bytes(site.bytes)}/iter ({count} tensor{plural}/iter)")
        return "\n".join(lines)

    @staticmethod
    def _meter_line(name: str, growth: float, limit: float, grows: bool) -> str:
        mark = "  <- grows" if grows else ""
        return f"  {name}: {format_bytes(growth)}/iter, tolerance {format_bytes(limit)}/iter{mark}"


def _torch():  # type: ignore[no-untyped-def]
    """torch, or a ModuleNotFoundError that says how to install it (leaklint does not bring it)."""
    __tracebackhide__ = True
    try:
        import torch
    except ModuleNotFoundError as error:
        if error.name != "torch":
            raise
        from leaklint.runtime.repro import TORCH_INSTALL

        raise ModuleNotFoundError(f"assert_no_growth needs torch, which is not installed: {TORCH_INSTALL}", name="torch") from None
    return torch


def _device(device: str) -> str:
    torch = _torch()

    if device == "auto":
        return "cuda" if torch.cuda.is_available() and torch.cuda.is_initialized() else "cpu"
    return device


def measure_growth(
    step: Callable[[], object],
    iterations: int = 20,
    warmup: int = 3,
    tolerance: str | float = DEFAULT_TOLERANCE,
    device: str = "auto",
    host_tolerance: str | float | None = DEFAULT_HOST_TOLERANCE,
) -> GrowthReport:
    """Run ``step`` under both meters and report growth and growing allocation sites, without judging."""
    __tracebackhide__ = True
    if iterations < 2 or warmup < 1:
        raise ValueError("assert_no_growth needs iterations >= 2 and warmup >= 1")
    _torch()
    limit = parse_size(tolerance)
    host_limit = None if host_tolerance is None else parse_size(host_tolerance)
    on = _device(device)
    if on.startswith("cuda"):
        live, sites = _run_cuda(step, iterations, warmup)
    else:
        live, sites = _run_cpu(step, iterations, warmup)
    growth = growth_per_iteration(live, warmup)
    host: list[float] = []
    host_growth, unavailable = None, None
    if host_limit is not None:
        meter = HeapMeter()
        unavailable = meter.unavailable()
        if unavailable is None:
            host = _run_host(meter, step, iterations, warmup)
            # On the CPU the heap also holds tensor storage, which the tensor meter judges already.
            host_growth = growth_per_iteration(host, warmup) - (0.0 if on.startswith("cuda") else growth)
    return GrowthReport(on, growth, limit, iterations, warmup, tuple(live), tuple(sites), host_growth, host_limit, tuple(host), unavailable)


def assert_no_growth(
    step: Callable[[], object],
    iterations: int = 20,
    warmup: int = 3,
    tolerance: str | float = DEFAULT_TOLERANCE,
    device: str = "auto",
    host_tolerance: str | float | None = DEFAULT_HOST_TOLERANCE,
) -> GrowthReport:
    """Call ``step()`` repeatedly; raise AssertionError if live tensor bytes grow by more than
    ``tolerance`` per call, or host memory outside tensors (autograd graph nodes) by more than
    ``host_tolerance`` per call (medians after the warm-up), naming which grew and where the
    accumulating tensors were allocated. ``device``: ``cpu``, ``cuda`` or ``auto`` (CUDA when torch
    has already initialised it, else CPU). ``host_tolerance=None`` checks tensor memory only."""
    __tracebackhide__ = True
    report = measure_growth(step, iterations, warmup, tolerance, device, host_tolerance)
    if report.grows:
        raise AssertionError(report.describe())
    return report


def _run_host(meter: HeapMeter, step: Callable[[], object], iterations: int, warmup: int) -> list[float]:
    meter.start()
    try:
        base = meter.read()
        readings = []
        for _ in range(warmup + iterations):
            step()
            readings.append(meter.read() - base)
    finally:
        meter.stop()
    return readings


def _run_cpu(step: Callable[[], object], iterations: int, warmup: int) -> tuple[list[float], list[Site]]:
    meter = CpuMeter()
    labeler = make_labeler()
    meter.start()
    try:
        with labeler:
            for index in range(warmup + iterations):
                with meter.iteration(index):
                    labeler.begin(index)
                    step()
    finally:
        series = meter.stop()
    return series.live, cpu_sites(meter.allocations, meter.iterations, labeler.labels, warmup)


def _run_cuda(step: Callable[[], object], iterations: int, warmup: int) -> tuple[list[float], list[Site]]:
    import torch

    meter = CudaMeter()
    snapshots = []
    torch.cuda.memory._record_memory_history(max_entries=100_000)
    try:
        meter.start()
        for index in range(warmup + iterations):
            with meter.iteration(index):
                step()
            snapshots.append(torch.cuda.memory._snapshot())
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
    return meter.stop().live, cuda_sites(snapshots, warmup)
