"""Where retained tensors were allocated: ``file:line`` of the innermost frame of the user's code.

CPU: the profiler's memory reports say exactly which allocations made after the warm-up are still
alive at the end (their address was never freed). The profiler names only the enclosing function,
so a ``TorchDispatchMode`` labels every storage an operator creates with the Python line that ran
the operator; a retained allocation takes the label of its address. CUDA: the caching
allocator's own history (``torch.cuda.memory._record_memory_history``) records the stack of each
block; blocks alive at the end and not at the end of the warm-up are the retained ones.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable

from leaklint.runtime.tensor_meter import Allocation

_RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))
UNKNOWN_SITE = "(allocated outside any torch operator)"


@dataclass(frozen=True)
class Site:
    """Bytes still held at the end that were allocated at ``where`` after the warm-up."""

    where: str
    bytes: int
    tensors: int


def _skipped_dirs() -> tuple[str, ...]:
    import torch

    return (os.path.dirname(os.path.abspath(torch.__file__)), _RUNTIME_DIR, os.path.dirname(os.__file__))


def _short(filename: str) -> str:
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if relative.startswith("..") else relative


def user_line(skip: tuple[str, ...]) -> str | None:
    """``file:line`` of the innermost frame outside torch, this package and the standard library."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(skip) and not filename.startswith("<"):
            return f"{_short(filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def make_labeler():  # type: ignore[no-untyped-def]
    """A dispatch mode whose ``sites`` maps each storage address an operator created to its line."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    skip = _skipped_dirs()

    def storages(values) -> dict[int, int]:  # type: ignore[no-untyped-def]
        found = {}
        for value in tree_flatten(values)[0]:
            if isinstance(value, torch.Tensor) and value.device.type == "cpu" and not value.is_sparse:
                try:
                    found[value.untyped_storage().data_ptr()] = 1
                except (RuntimeError, NotImplementedError):
                    continue
        return found

    class Labeler(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.sites: dict[int, str] = {}

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            result = func(*args, **(kwargs or {}))
            created = storages(result).keys() - storages((args, kwargs)).keys()
            if created:
                where = user_line(skip)
                if where is not None:
                    for pointer in created:
                        self.sites[pointer] = where
            return result

    return Labeler()


def retained(allocations: Iterable[Allocation], since_ns: int) -> list[Allocation]:
    """Allocations made at or after ``since_ns`` whose address was not freed afterwards."""
    alive: dict[int, Allocation] = {}
    for allocation in allocations:
        if allocation.size > 0:
            alive[allocation.ptr] = allocation
        else:
            alive.pop(allocation.ptr, None)
    return [a for a in alive.values() if a.time_ns >= since_ns]


def group_sites(labelled: Iterable[tuple[str, int]]) -> list[Site]:
    """Sum (where, bytes) pairs by ``where``, largest first."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for where, size in labelled:
        totals[where][0] += size
        totals[where][1] += 1
    return sorted((Site(where, b, n) for where, (b, n) in totals.items()), key=lambda s: (-s.bytes, s.where))


def cpu_sites(allocations: Iterable[Allocation], since_ns: int, labels: dict[int, str]) -> list[Site]:
    return group_sites((labels.get(a.ptr, UNKNOWN_SITE), a.size) for a in retained(allocations, since_ns))


def cuda_blocks(snapshot: dict) -> dict[int, tuple[int, str]]:
    """Allocated blocks of a ``torch.cuda.memory._snapshot()``: address -> (bytes, user line)."""
    skip = _skipped_dirs()
    blocks = {}
    for segment in snapshot.get("segments", ()):
        address = segment["address"]
        for block in segment["blocks"]:
            if block["state"] == "active_allocated":
                where = next(
                    (f"{_short(f['filename'])}:{f['line']}" for f in block.get("frames", ())
                     if not os.path.abspath(f["filename"]).startswith(skip) and not f["filename"].startswith("<")),
                    UNKNOWN_SITE,
                )
                blocks[address] = (block["size"], where)
            address += block["size"]
    return blocks


def cuda_sites(before: dict, after: dict) -> list[Site]:
    """Blocks allocated at the end of the run that were not allocated at the end of the warm-up."""
    old = cuda_blocks(before)
    return group_sites((where, size) for address, (size, where) in cuda_blocks(after).items() if address not in old)
