"""Where growing tensors were allocated: ``file:line`` of the innermost frame of the user's code.

A site is blamed only when the bytes it holds *grow* from one iteration to the next, judged by the
same statistic as the whole step (the median per-iteration change after the warm-up). Counting
every allocation still alive at the end would blame buffers a step re-creates every iteration:
gradients re-allocated by ``backward()`` after ``zero_grad()`` freed the previous ones are alive
at the end, but one iteration's worth of them, not more each step. So, per site, the meter
rebuilds the bytes alive at the end of every iteration and keeps the sites whose series grows;
their growths add up to (about) the step's growth.

CPU: the profiler's memory reports give every allocation and free with its address and time. The
profiler names only the enclosing function, so a ``TorchDispatchMode`` labels every storage an
operator creates with the Python line that ran the operator, per iteration (an address is reused
once freed; the allocation alive at the end of an iteration is the last one at its address in
that iteration, and so carries that iteration's last label). CUDA: the caching allocator's own
history (``torch.cuda.memory._record_memory_history``) records the stack of each block; a snapshot
at the end of every iteration gives the bytes per site.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from leaklint.runtime.tensor_meter import Allocation
from leaklint.runtime.verdict import growth_per_iteration

_RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))
UNKNOWN_SITE = "(allocated outside any torch operator)"


@dataclass(frozen=True)
class Site:
    """A line whose live tensors grow: ``bytes`` and ``tensors`` gained per iteration (median)."""

    where: str
    bytes: float
    tensors: float


def installed_dirs() -> tuple[str, ...]:
    """Folders of installed code (the standard library, site-packages), each ending in a
    separator: never the user's project, even when a virtual environment sits in it. Not the
    interpreter's prefix itself: a project may live below it (``/usr/local/app``)."""
    paths = sysconfig.get_paths()
    dirs = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if paths.get(key)}
    return tuple(sorted(os.path.abspath(d) + os.sep for d in dirs))


def _skipped_dirs() -> tuple[str, ...]:
    import torch

    return (os.path.dirname(os.path.abspath(torch.__file__)), _RUNTIME_DIR, os.path.dirname(os.__file__))


def _short(filename: str) -> str:
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if relative.startswith("..") else relative


def user_line(skip: tuple[str, ...], shown: dict[str, str | None] | None = None) -> str | None:
    """``file:line`` of the innermost frame outside torch, this package and the standard library.
    ``shown`` caches, per code file name, its short name (None for a skipped file): this runs for
    every operator, through call stacks dozens of frames deep under a trainer."""
    cache: dict[str, str | None] = {} if shown is None else shown
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        try:
            short = cache[name]
        except KeyError:
            filename = os.path.abspath(name)
            short = cache[name] = None if filename.startswith(skip) or name.startswith("<") else _short(filename)
        if short is not None:
            return f"{short}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def make_labeler():  # type: ignore[no-untyped-def]
    """A dispatch mode that labels each storage an operator creates with the line that ran it.

    Call ``begin(index)`` at the start of every iteration: ``labels[index]`` then maps the storage
    addresses created in that iteration to their line (the last label wins for a reused address).
    """
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    skip = _skipped_dirs()
    shown: dict[str, str | None] = {}
    tensor = torch.Tensor

    def add(found: set[int], value) -> None:  # type: ignore[no-untyped-def]
        if value.device.type == "cpu" and not value.is_sparse:
            try:
                found.add(value.untyped_storage().data_ptr())
            except (RuntimeError, NotImplementedError):
                pass

    def storages(values) -> set[int]:  # type: ignore[no-untyped-def]
        """Data pointers of the CPU tensors in ``values``: tensors and flat lists/tuples of them
        directly (an operator's usual arguments and results), anything else through pytree."""
        found: set[int] = set()
        for value in values:
            if isinstance(value, tensor):
                add(found, value)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    if isinstance(item, tensor):
                        add(found, item)
                    elif isinstance(item, (list, tuple, dict)):
                        found |= storages(tree_flatten(item)[0])
            elif isinstance(value, dict):
                found |= storages(tree_flatten(value)[0])
        return found

    class Labeler(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.labels: dict[int, dict[int, str]] = {}
            self._current: dict[int, str] = {}

        def begin(self, index: int) -> None:
            self._current = self.labels.setdefault(index, {})

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            result = func(*args, **(kwargs or {}))
            created = storages((result,))
            if created:
                created -= storages(args)
                if kwargs:
                    created -= storages(kwargs.values())
            if created:
                where = user_line(skip, shown)
                if where is not None:
                    for pointer in created:
                        self._current[pointer] = where
            return result

    return Labeler()


def growing_sites(per_iteration: Sequence[Mapping[str, tuple[int, int]]], warmup: int) -> list[Site]:
    """Sites whose live (bytes, tensors) at the end of each iteration grow, largest first.

    ``per_iteration[i]`` maps each site to what it holds at the end of iteration ``i``; a site
    missing from an iteration holds nothing then.
    """
    names = sorted({name for snapshot in per_iteration for name in snapshot})
    sites = []
    for name in names:
        held = [snapshot.get(name, (0, 0)) for snapshot in per_iteration]
        grows = growth_per_iteration([float(b) for b, _ in held], warmup)
        if grows > 0:
            sites.append(Site(name, grows, growth_per_iteration([float(n) for _, n in held], warmup)))
    return sorted(sites, key=lambda s: (-s.bytes, s.where))


def cpu_sites(
    allocations: Iterable[Allocation], iterations: Sequence[tuple[int, int]], labels: Mapping[int, Mapping[int, str]], warmup: int
) -> list[Site]:
    """Growing sites from the CPU allocator's reports (``allocations`` in time order),
    the iterations' ``(start_ns, end_ns)`` windows and the labeler's per-iteration labels."""
    alive: dict[int, tuple[int, str]] = {}
    held: dict[str, list[int]] = {}
    per_iteration: list[dict[str, tuple[int, int]]] = []
    events = iter(allocations)
    pending = next(events, None)
    for index, (start, end) in enumerate(iterations):
        names = labels.get(index, {})
        while pending is not None and pending.time_ns <= end:
            if pending.size > 0:
                where = names.get(pending.ptr, UNKNOWN_SITE) if pending.time_ns >= start else UNKNOWN_SITE
                alive[pending.ptr] = (pending.size, where)
                totals = held.setdefault(where, [0, 0])
                totals[0] += pending.size
                totals[1] += 1
            elif pending.ptr in alive:
                size, where = alive.pop(pending.ptr)
                held[where][0] -= size
                held[where][1] -= 1
            pending = next(events, None)
        per_iteration.append({name: (b, n) for name, (b, n) in held.items() if b or n})
    return growing_sites(per_iteration, warmup)


def cuda_blocks(snapshot: dict) -> dict[str, tuple[int, int]]:
    """Allocated blocks of a ``torch.cuda.memory._snapshot()`` summed by user line: (bytes, blocks)."""
    skip = _skipped_dirs()
    held: dict[str, tuple[int, int]] = {}
    for segment in snapshot.get("segments", ()):
        for block in segment["blocks"]:
            if block["state"] == "active_allocated":
                where = next(
                    (f"{_short(f['filename'])}:{f['line']}" for f in block.get("frames", ())
                     if not os.path.abspath(f["filename"]).startswith(skip) and not f["filename"].startswith("<")),
                    UNKNOWN_SITE,
                )
                size, count = held.get(where, (0, 0))
                held[where] = (size + block["size"], count + 1)
    return held


def cuda_sites(snapshots: Sequence[dict], warmup: int) -> list[Site]:
    """Growing sites from one snapshot at the end of every iteration."""
    return growing_sites([cuda_blocks(snapshot) for snapshot in snapshots], warmup)
