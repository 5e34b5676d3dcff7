"""Watching a real training run: the meters of ``leaklint run`` inside your own program.

``assert_no_growth`` calls a step itself and ``leaklint run`` runs a script and stops it; a real
run (a Lightning or transformers trainer, your own loop) calls its own steps and must go on
training. :class:`StepWatch` is what the three ways of watching share (:func:`watch_steps`, the
Lightning callback in :mod:`leaklint.runtime.lightning` and the transformers one in
:mod:`leaklint.runtime.transformers`): a :class:`~leaklint.runtime.steps.StepMeter` fed once per
step, judged once, right after the last measured step, so the run learns of a leak early and the
steps after that cost nothing (the meters stop).

What is judged and how is :func:`assert_no_growth`'s: tensor bytes and host heap bytes per step
against ``tolerance`` and ``host_tolerance``, with the lines that allocated the growing tensors.
On growth the watcher warns (:class:`MemoryGrowthWarning`, the message is the report) or raises
(:class:`MemoryGrowthError`, an ``AssertionError`` so that a test fails on it as on
``assert_no_growth``). A run that ends before the window is full is not judged: it gets a
:class:`TooFewStepsWarning` that says so, never a silent pass.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

from leaklint.runtime.attribution import installed_dirs
from leaklint.runtime.guard import DEFAULT_HOST_TOLERANCE, DEFAULT_TOLERANCE, GrowthReport
from leaklint.runtime.steps import DEFAULT_STEPS, DEFAULT_WARMUP, StepMeter, on_optimizer_steps
from leaklint.runtime.units import parse_size

__all__ = ["MemoryGrowthError", "MemoryGrowthWarning", "StepWatch", "TooFewStepsWarning", "WatchSteps", "watch_steps"]

WARN = "warn"
RAISE = "raise"
#: The trainers' third choice: warn, then ask the trainer to stop after this step.
STOP = "stop"


class MemoryGrowthWarning(UserWarning):
    """Memory grew from step to step during a watched run; the message is the report."""


class MemoryGrowthError(AssertionError):
    """Memory grew from step to step during a watched run (``on_growth="raise"``).

    An ``AssertionError``, as :func:`assert_no_growth` raises, so that a test reads it as a
    failure; ``report`` is the :class:`GrowthReport`.
    """

    def __init__(self, report: GrowthReport) -> None:
        super().__init__(report.describe())
        self.report = report


class TooFewStepsWarning(UserWarning):
    """A watched run ended before its measured steps were all seen: nothing was judged."""


class _Active:
    """The one watcher measuring now: the CPU profiler and the labeling dispatch mode do not
    nest, and two watchers would count each other's bookkeeping as the program's memory."""

    owner: Any = None


class StepWatch:
    """A :class:`StepMeter` and its verdict, for any code that knows where its steps end.

    ``step()`` at the end of each step; the step that completes the window returns the
    :class:`GrowthReport` (also kept as ``report``), every other returns None. ``close()`` stops
    the meters whatever happened (idempotent). ``on_growth`` is checked here, acted on by the
    caller (:meth:`act`), since a trainer warns from one rank and stops in its own way.
    """

    def __init__(
        self,
        steps: int = DEFAULT_STEPS,
        warmup: int = DEFAULT_WARMUP,
        on_growth: str = WARN,
        device: str = "auto",
        tolerance: str | float = DEFAULT_TOLERANCE,
        host_tolerance: str | float | None = DEFAULT_HOST_TOLERANCE,
        allowed: tuple[str, ...] = (WARN, RAISE),
    ) -> None:
        if on_growth not in allowed:
            raise ValueError(f"on_growth must be one of {', '.join(repr(a) for a in allowed)} (got {on_growth!r})")
        if device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be 'auto', 'cpu' or 'cuda' (got {device!r})")
        parse_size(tolerance)  # a bad size fails here, not after the run's first 30 steps
        if host_tolerance is not None:
            parse_size(host_tolerance)
        self.steps, self.warmup, self.device = steps, warmup, device
        self.on_growth = on_growth
        self.tolerance, self.host_tolerance = tolerance, host_tolerance
        self.meter = StepMeter(steps, warmup, device)
        self.report: GrowthReport | None = None

    @property
    def seen(self) -> int:
        return self.meter.seen

    @property
    def judged(self) -> bool:
        return self.report is not None

    def step(self) -> GrowthReport | None:
        """One step ended. Returns the report when this step completed the window."""
        if self.report is not None:
            return None
        if _Active.owner is None:
            _Active.owner = self
        elif _Active.owner is not self:
            raise RuntimeError("another leaklint watcher is measuring in this process; watch one run at a time")
        if not self.meter.boundary():
            return None
        self.report = self.meter.report(self.tolerance, self.host_tolerance)
        self._release()
        return self.report

    def restart(self) -> None:
        """Forget the steps seen so far (the boundaries changed meaning) and measure anew."""
        self.close()
        self.meter = StepMeter(self.steps, self.warmup, self.device)
        self.report = None

    def close(self) -> None:
        """Stop the meters (the run ended or raised); the report, if any, stays."""
        self.meter.finish()
        self._release()

    def _release(self) -> None:
        if _Active.owner is self:
            _Active.owner = None

    def too_few(self, who: str) -> str:
        """Why nothing was judged, for a run that ended early."""
        if self.seen == 0:
            return f"{who}: no step ended, so nothing was measured"
        return (
            f"{who}: the run ended after {self.seen} of the {self.meter.needed} steps needed "
            f"({self.warmup} warm-up); memory growth was not judged: lower steps= (and warmup=) or run longer"
        )

    def act(self, report: GrowthReport, warn: bool = True) -> None:
        """Warn or raise as ``on_growth`` says, when ``report`` grows (``warn=False``: this process
        stays quiet, another rank speaks for the run)."""
        if not report.grows:
            return
        if self.on_growth == RAISE:
            raise MemoryGrowthError(report)
        if warn:
            warn_at_user_frame(report.describe(), MemoryGrowthWarning)


def _library_dirs() -> tuple[str, ...]:
    """Folders of installed code and of leaklint itself (an editable install lives elsewhere)."""
    return (*installed_dirs(), os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep)


def warn_at_user_frame(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` pointed at the innermost frame of the user's own code.

    The verdict comes from inside ``optimizer.step()`` or a trainer's callback loop; a warning
    located there (torch's or Lightning's file) would be deduplicated with any other from that
    line and tells the user nothing. The user's line is the ``optimizer.step()`` call or the
    ``trainer.fit()``/``trainer.train()`` call.
    """
    skip = _library_dirs()
    frame, level = sys._getframe(1), 2
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith("<") and not os.path.abspath(filename).startswith(skip):
            break
        frame, level = frame.f_back, level + 1
    if frame is None:
        level = 2
    warnings.warn(message, category, stacklevel=level)


class WatchSteps:
    """What :func:`watch_steps` returns: use it in a ``with`` block; see there."""

    def __init__(self, watch: StepWatch) -> None:
        self._watch = watch
        self._handle: Any = None
        self._manual = False

    @property
    def report(self) -> GrowthReport | None:
        """The verdict once the window is measured (None before, or when the block ended early)."""
        return self._watch.report

    @property
    def seen(self) -> int:
        """Steps counted so far (stops growing once the window is measured)."""
        return self._watch.seen

    def step(self) -> GrowthReport | None:
        """End a step here. The first call makes these calls the only boundaries: the optimizer
        hook is removed and the steps it counted are dropped (the meter starts over), so a step
        is never counted twice. Returns the report on the step that completes the window."""
        if not self._manual:
            self._manual = True
            self._remove_hook()
            if self._watch.seen:
                self._watch.restart()
        return self._end_step()

    def _end_step(self) -> GrowthReport | None:
        report = self._watch.step()
        if report is not None:
            self._remove_hook()  # after the window the optimizer costs nothing more
            self._watch.act(report)
        return report

    def _remove_hook(self) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def __enter__(self) -> "WatchSteps":
        from leaklint.runtime.guard import _torch

        _torch()
        self._handle = on_optimizer_steps(self._end_step)
        return self

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        self._remove_hook()
        self._watch.close()
        if kind is None and not self._watch.judged:
            warnings.warn(self._watch.too_few("watch_steps"), TooFewStepsWarning, stacklevel=2)


def watch_steps(
    steps: int = DEFAULT_STEPS,
    warmup: int = DEFAULT_WARMUP,
    on_growth: str = WARN,
    device: str = "auto",
    tolerance: str | float = DEFAULT_TOLERANCE,
    host_tolerance: str | float | None = DEFAULT_HOST_TOLERANCE,
) -> WatchSteps:
    """Watch the steps run inside a ``with`` block; judge memory growth once, after ``steps``.

    A step ends at every ``optimizer.step()`` of the first optimizer that steps (torch's global
    optimizer hook: no optimizer to pass, a GAN's two optimizers make one step), or, once you call
    it, at every ``watch.step()`` (a loop without an optimizer: evaluation, sampling)::

        with watch_steps(on_growth="raise") as watch:
            for batch in loader:
                ...
                optimizer.step()

    After ``warmup`` unmeasured steps, half of the rest measure the host heap and half the live
    tensor bytes (with the lines that allocated the growing tensors); then the meters stop and the
    growth is judged against ``tolerance`` and ``host_tolerance`` as :func:`assert_no_growth` does:
    ``on_growth="warn"`` issues a :class:`MemoryGrowthWarning` whose message is the report,
    ``"raise"`` raises :class:`MemoryGrowthError` out of that step's ``optimizer.step()`` (or
    ``watch.step()``). Either way ``watch.report`` holds the :class:`GrowthReport`. A block that
    ends before the window is full judges nothing and warns :class:`TooFewStepsWarning` (not when
    it ends by an exception). ``device``: ``cpu``, ``cuda`` or ``auto`` (CUDA when the program holds
    CUDA tensors when the tensor phase starts).
    """
    return WatchSteps(StepWatch(steps, warmup, on_growth, device, tolerance, host_tolerance))
