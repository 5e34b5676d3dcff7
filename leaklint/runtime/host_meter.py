"""Host memory meters, for leaks that live outside tensor storage.

* ``heap``: bytes in use in glibc's malloc heap (``mallinfo2``): autograd graph nodes are C++
  objects there, so a graph kept alive after ``backward()`` freed its tensors shows up here. RSS
  does not: glibc's mmap threshold makes RSS jump by megabytes and hide kilobytes.
* ``python``: bytes traced by ``tracemalloc``: Python objects (figures, hook handles, caches).
* ``uss``: private memory (USS) of this process's children: DataLoader workers that copy pages of
  a dataset as they touch its objects.
"""

from __future__ import annotations

import ctypes
import gc
import tracemalloc
from typing import Protocol


class HostMeter(Protocol):
    name: str

    def unavailable(self) -> str | None:
        """Why this meter cannot run here, or None."""

    def start(self) -> None: ...

    def read(self) -> float: ...

    def stop(self) -> None: ...


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
    )]


def _mallinfo2():  # type: ignore[no-untyped-def]
    try:
        function = ctypes.CDLL(None).mallinfo2
    except (AttributeError, OSError):
        return None
    function.restype = _MallInfo2
    function.argtypes = []
    return function


class HeapMeter:
    """Bytes malloc has handed out and not taken back (small blocks plus mmap'ed ones)."""

    name = "heap"

    def __init__(self) -> None:
        self._function = _mallinfo2()

    def unavailable(self) -> str | None:
        return None if self._function is not None else "host meter unavailable (needs glibc >= 2.33 for mallinfo2)"

    def start(self) -> None:
        pass

    def read(self) -> float:
        info = self._function()
        return float(info.uordblks + info.hblkhd)

    def stop(self) -> None:
        pass


class PythonMeter:
    """Bytes of Python objects, traced by tracemalloc while the variant runs.

    Every reading collects garbage first: a closed figure sits in reference cycles until the cycle
    collector runs, and garbage is not a leak. The objects that existed before the variant started
    are frozen out of the collector's view, so a reading costs what the variant allocated, not what
    the whole process holds (torch alone is ~150k objects).
    """

    name = "python"

    def unavailable(self) -> str | None:
        return None

    def start(self) -> None:
        gc.collect()
        gc.freeze()
        self._was_tracing = tracemalloc.is_tracing()
        if not self._was_tracing:
            tracemalloc.start()

    def read(self) -> float:
        gc.collect()
        return float(tracemalloc.get_traced_memory()[0])

    def stop(self) -> None:
        if not self._was_tracing:
            tracemalloc.stop()
        gc.unfreeze()


class UssMeter:
    """Summed unique set size of the child processes (DataLoader workers)."""

    name = "uss"

    def unavailable(self) -> str | None:
        try:
            import psutil  # noqa: F401
        except ImportError:
            return "host meter unavailable (pip install psutil)"
        return None

    def start(self) -> None:
        import psutil

        self._process = psutil.Process()

    def read(self) -> float:
        import psutil

        total = 0
        for child in self._process.children(recursive=True):
            try:
                total += child.memory_full_info().uss
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return float(total)

    def stop(self) -> None:
        pass


def make_host_meter(name: str) -> HostMeter:
    meters = {"heap": HeapMeter, "python": PythonMeter, "uss": UssMeter}
    if name not in meters:
        raise ValueError(f"unknown host meter {name!r}; choose from {sorted(meters)}")
    return meters[name]()
