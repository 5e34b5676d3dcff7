"""``LeakWatch``: a Lightning callback that watches memory per step during ``trainer.fit``.

A step is one optimizer step, not one batch: with ``accumulate_grad_batches=4`` four batches
build one step's gradients, and the graph-free batches in between would read as steps that keep
memory (the gradients they add to are the step's). ``trainer.global_step`` counts optimizer steps
(manual optimization too), so a batch ends a step when it has moved since the last one.

Lightning is imported only when ``LeakWatch`` is first asked for, as ``lightning.pytorch`` (the
``lightning`` package) or else ``pytorch_lightning``; with neither installed, the ImportError
says how to install it. The callback subclasses the first found; Lightning calls its callbacks by
their hook names, so it also runs under the other package's Trainer.
"""

from __future__ import annotations

from typing import Any

from leaklint.runtime.guard import DEFAULT_HOST_TOLERANCE, DEFAULT_TOLERANCE, GrowthReport
from leaklint.runtime.steps import DEFAULT_STEPS, DEFAULT_WARMUP
from leaklint.runtime.watch import RAISE, STOP, WARN, StepWatch, TooFewStepsWarning, warn_at_user_frame

__all__ = ["LeakWatch"]

INSTALL = "pip install lightning (or pytorch-lightning)"


def _callback_base() -> type:
    try:
        from lightning.pytorch import Callback
    except ImportError:
        try:
            from pytorch_lightning import Callback
        except ImportError:
            raise ImportError(f"leaklint.runtime.lightning.LeakWatch needs Lightning, which is not installed: {INSTALL}") from None
    return Callback


def _make_class(base: type) -> type:
    class LeakWatch(base):  # type: ignore[misc, valid-type]
        """Judge memory growth over ``steps`` optimizer steps of ``trainer.fit`` (after ``warmup``).

        ``on_growth``: ``"warn"`` (a :class:`MemoryGrowthWarning` from global rank zero whose
        message names the growing meter and lines), ``"stop"`` (that warning, then
        ``trainer.should_stop``: the fit ends after this step, as early stopping ends it) or
        ``"raise"`` (:class:`MemoryGrowthError` out of ``trainer.fit``, on every rank that
        measured growth). ``report`` holds the :class:`GrowthReport` once judged. The other
        arguments are :func:`leaklint.runtime.watch_steps`'.
        """

        def __init__(
            self,
            steps: int = DEFAULT_STEPS,
            warmup: int = DEFAULT_WARMUP,
            on_growth: str = WARN,
            device: str = "auto",
            tolerance: str | float = DEFAULT_TOLERANCE,
            host_tolerance: str | float | None = DEFAULT_HOST_TOLERANCE,
        ) -> None:
            super().__init__()
            self._arguments = (steps, warmup, on_growth, device, tolerance, host_tolerance)
            self._watch = StepWatch(*self._arguments, allowed=(WARN, STOP, RAISE))  # checks them now
            self._last_step: int | None = None

        @property
        def report(self) -> GrowthReport | None:
            return self._watch.report

        def on_train_start(self, trainer: Any, pl_module: Any) -> None:
            self._watch.close()
            self._watch = StepWatch(*self._arguments, allowed=(WARN, STOP, RAISE))
            self._last_step = trainer.global_step

        def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
            if self._watch.judged or trainer.global_step == self._last_step:
                return  # measured already, or a batch that only accumulated gradients
            self._last_step = trainer.global_step
            report = self._watch.step()
            if report is None or not report.grows:
                return
            self._watch.act(report, warn=trainer.is_global_zero)
            if self._watch.on_growth == STOP:
                trainer.should_stop = True

        def on_train_end(self, trainer: Any, pl_module: Any) -> None:
            self._watch.close()
            if not self._watch.judged and trainer.is_global_zero:
                warn_at_user_frame(self._watch.too_few("LeakWatch"), TooFewStepsWarning)

        def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
            self._watch.close()

    LeakWatch.__module__ = __name__
    return LeakWatch


_classes: dict[type, type] = {}


def __getattr__(name: str) -> Any:
    if name == "LeakWatch":
        base = _callback_base()
        if base not in _classes:
            _classes[base] = _make_class(base)
        return _classes[base]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
