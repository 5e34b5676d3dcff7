"""``leaklint run SCRIPT``: the user's own training script, in this process, under the meters.

The script runs through :mod:`runpy` with ``sys.argv`` set to ``[SCRIPT, *ARGS]``. Its steps are
found through torch's global optimizer hook (``register_optimizer_step_post_hook``): the end of
every ``optimizer.step()`` is a step boundary. Steps are then used in three phases, one script run:

1. ``warmup`` steps: nothing measured (optimizer state, caches, lazy buffers appear here);
2. the first half of the remaining steps: the host heap (:class:`HeapMeter`) at every boundary;
3. the second half: live CPU tensor bytes (:class:`CpuMeter`) with the allocation labeler
   (:func:`make_labeler`) naming the line that allocated each tensor.

The phases are separate for the reason :mod:`leaklint.runtime.guard` gives: the profiler and the
labeler allocate host memory themselves. After the last step the hook raises a private
``BaseException`` (so a script's ``except Exception`` does not swallow it), which ends the script;
hooks, ``sys.argv`` and ``sys.path[0]`` are restored whatever happens. The verdict is a
:class:`GrowthReport`, judged with the guard's tolerances.

Not built yet: a ``backward()`` fallback and ``--step module:function`` for scripts without an
optimizer, CUDA, and DataLoader worker memory.
"""

from __future__ import annotations

import os
import runpy
import sys
from dataclasses import dataclass, field
from typing import Any

from leaklint.runtime.guard import DEFAULT_HOST_TOLERANCE, DEFAULT_TOLERANCE, GrowthReport
from leaklint.runtime.units import parse_size
from leaklint.runtime.verdict import growth_per_iteration

DEFAULT_STEPS = 30
DEFAULT_WARMUP = 5
#: Each measured phase needs at least this many steps for a median of changes to mean anything.
MIN_PHASE = 3


class _StopScript(BaseException):
    """Raised from the step hook once every step needed has run."""


class ScriptError(Exception):
    """The user's script raised (``error`` is what it raised) or could not be run."""

    def __init__(self, message: str, error: BaseException | None = None) -> None:
        super().__init__(message)
        self.error = error


class TooFewSteps(Exception):
    """The script ended before ``warmup + measured`` steps ran."""

    def __init__(self, seen: int, needed: int) -> None:
        super().__init__(f"the script finished after {seen} step(s); leaklint run needs {needed} (--steps)")
        self.seen = seen
        self.needed = needed


@dataclass
class RunResult:
    """What one ``leaklint run`` measured: ``report`` judges growth, ``lines`` are the script's
    lines that ran (1-based), ``steps`` the step boundaries seen before the script was stopped."""

    script: str
    boundary: str
    steps: int
    warmup: int
    report: GrowthReport
    lines: set[int] = field(default_factory=set)


def phase_sizes(steps: int, warmup: int) -> tuple[int, int]:
    """Steps measured by the host meter and by the tensor meter, out of ``steps`` in all."""
    measured = steps - warmup
    if measured < 2 * MIN_PHASE:
        raise ValueError(f"--steps must exceed --warmup by at least {2 * MIN_PHASE} (got --steps {steps}, --warmup {warmup})")
    host = measured // 2
    return host, measured - host


class _Stepper:
    """The state machine behind the step hook: which phase, what each meter read."""

    def __init__(self, steps: int, warmup: int) -> None:
        from leaklint.runtime.attribution import make_labeler
        from leaklint.runtime.host_meter import HeapMeter
        from leaklint.runtime.tensor_meter import CpuMeter

        self.warmup = warmup
        self.host_steps, self.tensor_steps = phase_sizes(steps, warmup)
        self.needed = steps
        self.seen = 0
        self.heap = HeapMeter()
        self.host_unavailable = self.heap.unavailable()
        self.host: list[float] = []
        self._host_base = 0.0
        self.meter = CpuMeter()
        self.labeler = make_labeler()
        self._tensor_on = False
        self._labeler_on = False

    def boundary(self) -> None:
        self.seen += 1
        host_start = self.warmup
        tensor_start = host_start + self.host_steps
        if host_start <= self.seen <= tensor_start and self.host_unavailable is None:
            reading = self.heap.read()
            if self.seen == host_start:
                self._host_base = reading
            self.host.append(reading - self._host_base)
        if self.seen == tensor_start:
            self.meter.start()
            self._tensor_on = True
            self.labeler.__enter__()
            self._labeler_on = True
        if self.seen >= tensor_start:
            index = self.seen - tensor_start
            self._mark(index)
            if index < self.tensor_steps:
                self.labeler.begin(index)
        if self.seen >= self.needed:
            self.finish()
            raise _StopScript

    def _mark(self, index: int) -> None:
        import torch
        from leaklint.runtime.tensor_meter import ITERATION_MARK

        with torch.profiler.record_function(f"{ITERATION_MARK}{index}"):
            pass

    def finish(self) -> None:
        """Stop whatever is running (idempotent)."""
        if self._labeler_on:
            self._labeler_on = False
            self.labeler.__exit__(None, None, None)
        if self._tensor_on:
            self._tensor_on = False
            self.meter.stop()

    def windows(self) -> list[tuple[int, int]]:
        """Each measured tensor step: from its starting mark to the next (the meter's marks are
        points, since a boundary is one moment inside ``optimizer.step()``)."""
        starts = [start for start, _ in self.meter.iterations]
        return list(zip(starts, starts[1:]))


def run_script(
    script: str,
    args: tuple[str, ...] | list[str] = (),
    steps: int = DEFAULT_STEPS,
    warmup: int = DEFAULT_WARMUP,
    tolerance: str | float = DEFAULT_TOLERANCE,
    host_tolerance: str | float = DEFAULT_HOST_TOLERANCE,
) -> RunResult:
    """Run ``script`` with ``args`` until ``steps`` optimizer steps have run, measuring as the
    module docs say. Raises :class:`ScriptError` when the script raises, :class:`TooFewSteps`
    when it ends first, ``ModuleNotFoundError`` (name ``torch``) without torch."""
    from leaklint.runtime.attribution import cpu_sites
    from leaklint.runtime.guard import _torch
    from leaklint.runtime.tensor_meter import _series

    _torch()
    from torch.optim.optimizer import register_optimizer_step_post_hook

    stepper = _Stepper(steps, warmup)
    path = os.path.abspath(script)
    lines: set[int] = set()

    def hook(optimizer: Any, args: Any, kwargs: Any) -> None:
        stepper.boundary()

    handle = register_optimizer_step_post_hook(hook)
    saved_argv, saved_path0 = sys.argv[:], sys.path[0] if sys.path else None
    sys.argv = [script, *args]
    if sys.path:
        sys.path[0] = os.path.dirname(path)
    else:
        sys.path.append(os.path.dirname(path))
    saved_trace = sys.gettrace()
    sys.settrace(_line_tracer(path, lines))
    try:
        runpy.run_path(path, run_name="__main__")
    except _StopScript:
        pass
    except SystemExit as exit_:
        if exit_.code not in (None, 0) and stepper.seen < stepper.needed:
            raise ScriptError(f"{script} exited with status {exit_.code} after {stepper.seen} step(s)", exit_) from None
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - whatever the user's script raises is reported, not re-raised
        raise ScriptError(f"{script} raised {type(error).__name__}: {error}", error) from None
    finally:
        sys.settrace(saved_trace)
        handle.remove()
        stepper.finish()
        sys.argv = saved_argv
        if saved_path0 is not None and sys.path:
            sys.path[0] = saved_path0
    if stepper.seen < stepper.needed:
        raise TooFewSteps(stepper.seen, stepper.needed)
    windows = stepper.windows()
    live = _series(stepper.meter.allocations, windows).live
    labels = {index: names for index, names in stepper.labeler.labels.items()}
    sites = cpu_sites(stepper.meter.allocations, windows, labels, 1)
    growth = growth_per_iteration(live, 1)
    host_growth = None
    if stepper.host_unavailable is None:
        # The host heap also holds CPU tensor storage, which the tensor meter judges already.
        host_growth = growth_per_iteration(stepper.host, 1) - growth
    report = GrowthReport(
        "cpu", growth, parse_size(tolerance), len(windows), warmup, tuple(live), tuple(sites),
        host_growth, parse_size(host_tolerance), tuple(stepper.host), stepper.host_unavailable,
    )
    return RunResult(script, "optimizer.step()", stepper.seen, warmup, report, lines)


def _line_tracer(path: str, lines: set[int]):  # type: ignore[no-untyped-def]
    """A ``sys.settrace`` function that records the lines of ``path`` that run (only that file's
    frames get a local tracer, so the rest of the program runs untraced)."""

    def local(frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "line" and frame.f_lineno > 0:
            lines.add(frame.f_lineno)
        return local

    def global_(frame, event, arg):  # type: ignore[no-untyped-def]
        if frame.f_code.co_filename == path:
            return local
        return None

    return global_
