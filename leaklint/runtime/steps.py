"""Memory measured across the step boundaries of a program that runs by itself.

``assert_no_growth`` calls the step; here the program does (a training script under ``leaklint
run``, a Lightning or transformers trainer, a loop inside ``watch_steps``) and something tells the
:class:`StepMeter` at the end of each step (``boundary()``). The steps are used in three phases:

1. ``warmup`` steps: nothing measured (optimizer state, caches, lazy buffers appear here);
2. the first half of the remaining steps: the host heap (:class:`HeapMeter`) at every boundary;
3. the second half: live tensor bytes and the lines that allocated the growing tensors (CPU: the
   profiler's memory reports and the allocation labeler; CUDA: the caching allocator's counters
   and its recorded history, one snapshot per boundary).

The phases are separate for the reason :mod:`leaklint.runtime.guard` gives: the profiler and the
labeler allocate host memory themselves. Once every step has been measured the meters stop, so
the steps after cost nothing. The verdict is a :class:`GrowthReport` judged with the guard's
tolerances.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

from leaklint.runtime.guard import DEFAULT_HOST_TOLERANCE, DEFAULT_TOLERANCE, GrowthReport
from leaklint.runtime.units import parse_size
from leaklint.runtime.verdict import steady_growth

#: DataLoader workers touch the pages of the dataset they read (copy-on-write copies them, 4 KiB
#: at a time): more than this many bytes of their private memory per step is growth.
DEFAULT_WORKERS_TOLERANCE = "64 KiB"
DEFAULT_STEPS = 30
DEFAULT_WARMUP = 5
#: Each measured phase needs at least this many steps for a median of changes to mean anything.
MIN_PHASE = 3


def phase_sizes(steps: int, warmup: int) -> tuple[int, int]:
    """Steps measured by the host meter and by the tensor meter, out of ``steps`` in all."""
    measured = steps - warmup
    if measured < 2 * MIN_PHASE:
        raise ValueError(f"steps must exceed warmup by at least {2 * MIN_PHASE} (got steps {steps}, warmup {warmup})")
    host = measured // 2
    return host, measured - host


def cuda_in_use() -> bool:
    """Whether the program has put tensors on a CUDA device (then CUDA memory is what to watch)."""
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_initialized() and torch.cuda.memory_allocated() > 0)


class FirstOptimizer:
    """Which optimizer's steps are the program's steps: the first one seen stepping.

    A GAN steps its generator's and its discriminator's optimizers once each per training step;
    counting both would make one step two. The first optimizer is held by weak reference, so when a
    program drops it and trains anew (a second run in the same process), the next one to step
    takes its place instead of no step ever ending again.
    """

    def __init__(self) -> None:
        self._first: Any = None

    def is_first(self, optimizer: Any) -> bool:
        """Whether ``optimizer`` (which just stepped) is the one that counts."""
        first = None if self._first is None else self._first()
        if first is None:
            try:
                self._first = weakref.ref(optimizer)
            except TypeError:  # an optimizer-like object without weak references: keep it alive
                self._first = lambda: optimizer
            return True
        return first is optimizer


def on_optimizer_steps(end_step: Callable[[], object]) -> Any:
    """Call ``end_step()`` after every step of the first optimizer that steps (see
    :class:`FirstOptimizer`), through torch's global optimizer post hook: no optimizer has to be
    named, and a trainer's own optimizers (Lightning's, transformers') count too. Returns the
    hook's handle: ``.remove()`` it."""
    from torch.optim.optimizer import register_optimizer_step_post_hook

    first = FirstOptimizer()

    def hook(optimizer: Any, args: Any, kwargs: Any) -> None:
        if first.is_first(optimizer):
            end_step()

    return register_optimizer_step_post_hook(hook)


class StepMeter:
    """Feed it ``boundary()`` at the end of every step; after ``steps`` boundaries, ``report()``.

    ``device``: ``cpu``, ``cuda`` or ``auto`` (decided at the first measured tensor step: CUDA
    when the program holds CUDA tensors by then). ``workers``: also read the private memory (USS)
    of the child processes, DataLoader workers, at every measured step.
    """

    def __init__(self, steps: int = DEFAULT_STEPS, warmup: int = DEFAULT_WARMUP, device: str = "auto", workers: bool = False) -> None:
        from leaklint.runtime.host_meter import HeapMeter

        self.warmup = warmup
        self.host_steps, self.tensor_steps = phase_sizes(steps, warmup)
        self.needed = steps
        self.seen = 0
        self.device = device
        self.heap = HeapMeter()
        self.host_unavailable = self.heap.unavailable()
        self.host: list[float] = []
        self._host_base = 0.0
        self._cpu: Any = None
        self._labeler: Any = None
        self._cuda_base = 0
        self.live: list[float] = []
        self._snapshots: list[dict] = []
        self._running = False
        self.workers: list[float] | None = None
        self.workers_unavailable: str | None = None
        if workers:
            from leaklint.runtime.host_meter import UssMeter

            self._uss = UssMeter()
            self.workers_unavailable = self._uss.unavailable()
            if self.workers_unavailable is None:
                self._uss.start()
                self.workers = []

    @property
    def done(self) -> bool:
        return self.seen >= self.needed

    @property
    def host_start(self) -> int:
        return self.warmup

    @property
    def tensor_start(self) -> int:
        return self.warmup + self.host_steps

    def boundary(self) -> bool:
        """One step ended. Returns True once the last step needed has been measured."""
        if self.done:
            return True
        self.seen += 1
        if self.workers is not None and self.seen >= self.host_start:
            self.workers.append(self._uss.read())
        if self.host_start <= self.seen <= self.tensor_start and self.host_unavailable is None:
            reading = self.heap.read()
            if self.seen == self.host_start:
                self._host_base = reading
            self.host.append(reading - self._host_base)
        if self.seen == self.tensor_start:
            self._start_tensor_phase()
        if self.seen >= self.tensor_start:
            self._tensor_boundary(self.seen - self.tensor_start)
        if self.done:
            self.finish()
            return True
        return False

    def _start_tensor_phase(self) -> None:
        if self.device == "auto":
            self.device = "cuda" if cuda_in_use() else "cpu"
        self._running = True
        if self.device == "cuda":
            import torch

            torch.cuda.memory._record_memory_history(max_entries=100_000)
            torch.cuda.synchronize()
            self._cuda_base = torch.cuda.memory_allocated()
            return
        from leaklint.runtime.attribution import make_labeler
        from leaklint.runtime.tensor_meter import CpuMeter

        self._earlier = _python_held_storages()
        self._unseen_frees = [0.0]
        self._cpu = CpuMeter()
        self._cpu.start()
        self._labeler = make_labeler()
        self._labeler.__enter__()

    def _tensor_boundary(self, index: int) -> None:
        import torch

        if self.device == "cuda":
            torch.cuda.synchronize()
            self.live.append(float(torch.cuda.memory_allocated() - self._cuda_base))
            self._snapshots.append(torch.cuda.memory._snapshot())
            return
        from leaklint.runtime.tensor_meter import ITERATION_MARK

        # A boundary is one moment (inside optimizer.step(), say): a point mark; each measured step
        # runs from its mark to the next.
        with torch.profiler.record_function(f"{ITERATION_MARK}{index}"):
            pass
        if index > 0:
            self._unseen_frees.append(self._unseen_frees[-1] + _freed(self._earlier))
        if index < self.tensor_steps:
            self._labeler.begin(index)

    def finish(self) -> None:
        """Stop whatever meter is running (idempotent; call it when the program ends early)."""
        if not self._running:
            return
        self._running = False
        if self.device == "cuda":
            import torch

            torch.cuda.memory._record_memory_history(enabled=None)
            return
        self._labeler.__exit__(None, None, None)
        self._cpu.stop()

    def workers_growth(self) -> float | None:
        """Median growth per step of the workers' private memory (None when not measured)."""
        if not self.workers:
            return None
        return steady_growth(self.workers, 1)

    def report(self, tolerance: str | float = DEFAULT_TOLERANCE, host_tolerance: str | float | None = DEFAULT_HOST_TOLERANCE) -> GrowthReport:
        """The growth measured, judged against the tolerances (call after ``done``)."""
        from leaklint.runtime.attribution import cpu_sites, cuda_sites
        from leaklint.runtime.tensor_meter import _series

        self.finish()
        if self.device == "cuda":
            live, sites = self.live, cuda_sites(self._snapshots, 1)
        else:
            starts = [start for start, _ in self._cpu.iterations]
            windows = list(zip(starts, starts[1:]))
            # Live bytes at the end of step i, less the storages from before the phase freed by then.
            counted = _series(self._cpu.allocations, windows).live
            live = [value - self._unseen_frees[min(i + 1, len(self._unseen_frees) - 1)] for i, value in enumerate(counted)]
            sites = cpu_sites(self._cpu.allocations, windows, self._labeler.labels, 1)
        growth = steady_growth(live, 1)
        host_growth = None
        host_limit = None if host_tolerance is None else parse_size(host_tolerance)
        if self.host_unavailable is None and host_limit is not None:
            # On the CPU the heap also holds tensor storage, which the tensor meter judges already.
            # Less tensor bytes that really went away would make host growth out of nothing.
            host_growth = steady_growth(self.host, 1) - (0.0 if self.device == "cuda" else max(growth, 0.0))
        return GrowthReport(
            self.device, growth, parse_size(tolerance), len(live), self.warmup, tuple(live), tuple(sites),
            host_growth, host_limit, tuple(self.host), self.host_unavailable,
        )


def _python_held_storages() -> dict[int, tuple[int, list[Any]]]:
    """The CPU tensor storages Python holds now: data pointer -> (bytes, weak references to the
    tensors on it). The profiler sees no free of a block allocated before it started, so a
    bounded buffer filled before the tensor phase (a replay buffer, the last frames of a video)
    would look like growth as its old entries are replaced: their frees are found here instead,
    when every tensor on a storage has died."""
    import gc
    import weakref

    import torch

    held: dict[int, tuple[int, list[Any]]] = {}
    tensor = torch.Tensor
    gc.collect()  # garbage from before (an earlier script's objects) is not freed during the phase
    for value in gc.get_objects():
        # type(), not isinstance(): isinstance() reads ``__class__``, which some module proxies
        # answer with a deprecation warning.
        if not issubclass(type(value), tensor):
            continue
        try:
            if value.device.type != "cpu" or value.is_sparse:
                continue
            storage = value.untyped_storage()
            pointer, size = storage.data_ptr(), storage.nbytes()
            reference = weakref.ref(value)
        except (RuntimeError, NotImplementedError, TypeError):
            continue
        if pointer and size:
            held.setdefault(pointer, (size, []))[1].append(reference)
    return held


def _freed(held: dict[int, tuple[int, list[Any]]]) -> float:
    """Bytes of the storages in ``held`` whose tensors have all died since the last call (removed)."""
    gone = [pointer for pointer, (_, references) in held.items() if all(reference() is None for reference in references)]
    return float(sum(held.pop(pointer)[0] for pointer in gone))

