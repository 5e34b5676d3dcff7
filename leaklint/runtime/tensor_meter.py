"""Live tensor bytes per iteration: the CUDA allocator's counters, or the CPU allocator's reports.

CUDA keeps exact counters (``memory_allocated``). The CPU allocator keeps none a program can read,
but while ``torch.profiler`` profiles memory it reports every allocation and free with its signed
size and the running total of what it has handed out; that total, read at the end of each
iteration, is the CPU twin of ``memory_allocated()``. Blocks allocated before profiling started
are invisible (their frees report nothing), so profiling starts before the warm-up and every
number is relative to the moment it started. RSS is no substitute: the allocator keeps freed
memory, so RSS cannot tell a leaky loop from a fixed one.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Iterator

ITERATION_MARK = "leaklint.iteration."
#: What c10's CPU allocator logs (``LOG(WARNING)``, straight to file descriptor 2) the first time a
#: block allocated before profiling began is freed while profiling: "Memory block of unknown size
#: was allocated before the profiling started, profiler results will not include the deallocation
#: event". It is expected here (the meters start after the model and data exist, and every
#: number is relative to that moment), so it never reaches the user.
UNKNOWN_BLOCK_WARNING = b"Memory block of unknown size was allocated before the profiling started"


@dataclass
class TensorSeries:
    """Per iteration: live bytes at its end, the highest live bytes within it, bytes allocated in it."""

    live: list[float] = field(default_factory=list)
    peaks: list[float] = field(default_factory=list)
    allocated: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Allocation:
    """One report of the CPU allocator: ``size`` is negative for a free; ``total`` is after it."""

    time_ns: int
    size: int
    ptr: int
    frames: tuple[str, ...] = ()


class CpuMeter:
    """Tensor bytes on the CPU through the profiler's memory reports (see the module docs)."""

    device = "cpu"

    def __init__(self, with_stack: bool = False) -> None:
        self.with_stack = with_stack
        self._profile = None
        self.allocations: list[Allocation] = []
        self.iterations: list[tuple[int, int]] = []

    def start(self) -> None:
        import torch
        from torch.profiler import ProfilerActivity, profile

        self._torch = torch
        self._profile = profile(activities=[ProfilerActivity.CPU], profile_memory=True, with_stack=self.with_stack)
        with _quiet_kineto():
            self._profile.__enter__()
        self._stderr = StderrFilter(UNKNOWN_BLOCK_WARNING)
        self._stderr.start()

    @contextlib.contextmanager
    def iteration(self, index: int) -> Iterator[None]:
        with self._torch.profiler.record_function(f"{ITERATION_MARK}{index}"):
            yield

    def stop(self) -> TensorSeries:
        assert self._profile is not None, "start() first"
        self._stderr.stop()
        with _quiet_kineto():
            self._profile.__exit__(None, None, None)
        tree = self._profile.profiler.kineto_results.experimental_event_tree()
        self.allocations, self.iterations = _collect(tree, self.with_stack)
        return _series(self.allocations, self.iterations)


class CudaMeter:
    """Tensor bytes on the current CUDA device, from the caching allocator's own counters."""

    device = "cuda"

    def start(self) -> None:
        import torch

        self._cuda = torch.cuda
        self._cuda.synchronize()
        self._base = self._cuda.memory_allocated()
        self._allocated_base = self._allocated_so_far()
        self.series = TensorSeries()

    def _allocated_so_far(self) -> int:
        return int(self._cuda.memory_stats().get("allocated_bytes.all.allocated", 0))

    @contextlib.contextmanager
    def iteration(self, index: int) -> Iterator[None]:
        self._cuda.synchronize()
        self._cuda.reset_peak_memory_stats()
        before = self._allocated_so_far()
        yield
        self._cuda.synchronize()
        self.series.live.append(float(self._cuda.memory_allocated() - self._base))
        self.series.peaks.append(float(self._cuda.max_memory_allocated() - self._base))
        self.series.allocated.append(float(self._allocated_so_far() - before))

    def stop(self) -> TensorSeries:
        return self.series


def make_meter(device: str, with_stack: bool = False) -> CpuMeter | CudaMeter:
    return CudaMeter() if device.startswith("cuda") else CpuMeter(with_stack=with_stack)


def _walk(nodes):  # type: ignore[no-untyped-def]
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def _python_frames(node) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    """``file(line): function`` names of the Python calls around ``node``, innermost first."""
    import torch

    frames = []
    parent = node.parent
    while parent is not None:
        if parent.tag == torch._C._profiler._EventType.PyCall:
            frames.append(parent.name)
        parent = parent.parent
    return tuple(frames)


def _collect(tree, with_stack: bool) -> tuple[list[Allocation], list[tuple[int, int]]]:  # type: ignore[no-untyped-def]
    import torch

    allocation_tag = torch._C._profiler._EventType.Allocation
    allocations: list[Allocation] = []
    iterations: list[tuple[int, int, int]] = []
    for node in _walk(tree):
        if node.tag == allocation_tag:
            fields = node.extra_fields
            if fields.device.type != "cpu":
                continue
            frames = _python_frames(node) if with_stack and fields.alloc_size > 0 else ()
            allocations.append(Allocation(node.start_time_ns, int(fields.alloc_size), int(fields.ptr), frames))
        elif node.name.startswith(ITERATION_MARK):
            index = int(node.name[len(ITERATION_MARK):])
            iterations.append((index, node.start_time_ns, node.end_time_ns))
    allocations.sort(key=lambda a: a.time_ns)
    return allocations, [(start, end) for _, start, end in sorted(iterations)]


def _series(allocations: list[Allocation], iterations: list[tuple[int, int]]) -> TensorSeries:
    series = TensorSeries()
    live, position = 0.0, 0
    for start, end in iterations:
        while position < len(allocations) and allocations[position].time_ns < start:
            live += allocations[position].size
            position += 1
        peak, allocated = live, 0.0
        while position < len(allocations) and allocations[position].time_ns <= end:
            size = allocations[position].size
            live += size
            allocated += max(size, 0)
            peak = max(peak, live)
            position += 1
        series.live.append(live)
        series.peaks.append(peak)
        series.allocated.append(allocated)
    return series


class StderrFilter:
    """Drop the lines holding ``pattern`` from what is written to file descriptor 2 between
    :meth:`start` and :meth:`stop`, and keep every other byte.

    C++ code writes to the descriptor, not to ``sys.stderr``, so the descriptor is pointed at a
    temporary file meanwhile (a file, not a pipe, so a chatty step cannot block on a full pipe);
    :meth:`stop` points it back and writes the kept lines to it. What the step prints to standard
    error therefore appears when the measurement ends, not while it runs. Where the descriptor
    cannot be redirected (no descriptor 2, an embedding host), nothing is filtered.
    """

    def __init__(self, pattern: bytes) -> None:
        self.pattern = pattern
        self._saved: int | None = None
        self._capture = None

    def start(self) -> None:
        import os
        import sys
        import tempfile

        try:
            sys.stderr.flush()
            capture = tempfile.TemporaryFile()
            saved = os.dup(2)
            os.dup2(capture.fileno(), 2)
        except (OSError, ValueError, AttributeError):
            return
        self._saved, self._capture = saved, capture

    def stop(self) -> None:
        import os
        import sys

        if self._saved is None or self._capture is None:
            return
        try:
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):
            pass
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._saved = None
        with self._capture as capture:
            capture.seek(0)
            kept = b"".join(line for line in capture if self.pattern not in line)
        self._capture = None
        try:
            while kept:
                kept = kept[os.write(2, kept):]
        except OSError:
            pass  # standard error is gone: nothing to show the lines on


@contextlib.contextmanager
def _quiet_kineto() -> Iterator[None]:
    """Kineto logs profiler start/stop on stderr through C++; keep that out of the user's terminal."""
    import os
    import sys

    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
