"""``LeakWatch``: a transformers ``TrainerCallback`` that watches memory per step of ``trainer.train()``.

``on_step_end`` is the Trainer's end of one optimizer step (after ``gradient_accumulation_steps``
batches), so a step here is what ``state.global_step`` counts. transformers is imported only when
``LeakWatch`` is first asked for; without it, the ImportError says how to install it.

The Trainer calls no callback when training raises: the meters are stopped by ``close()`` (call it
in your ``except``/``finally`` if you catch the error and go on in the same process), by the next
``train()`` with this callback, or, at the latest, once the window is measured.
"""

from __future__ import annotations

from typing import Any

from leaklint.runtime.guard import DEFAULT_HOST_TOLERANCE, DEFAULT_TOLERANCE, GrowthReport
from leaklint.runtime.steps import DEFAULT_STEPS, DEFAULT_WARMUP
from leaklint.runtime.watch import RAISE, STOP, WARN, StepWatch, TooFewStepsWarning, warn_at_user_frame

__all__ = ["LeakWatch"]

INSTALL = "pip install transformers accelerate"


def _callback_base() -> type:
    try:
        from transformers import TrainerCallback
    except ImportError:
        raise ImportError(f"leaklint.runtime.transformers.LeakWatch needs transformers, which is not installed: {INSTALL}") from None
    return TrainerCallback


def _make_class(base: type) -> type:
    class LeakWatch(base):  # type: ignore[misc, valid-type]
        """Judge memory growth over ``steps`` optimizer steps of ``trainer.train()`` (after ``warmup``).

        ``on_growth``: ``"warn"`` (a :class:`MemoryGrowthWarning` from the main process whose
        message names the growing meter and lines), ``"stop"`` (that warning, then
        ``control.should_training_stop``: training ends after this step) or ``"raise"``
        (:class:`MemoryGrowthError` out of ``trainer.train()``). ``report`` holds the
        :class:`GrowthReport` once judged. The other arguments are
        :func:`leaklint.runtime.watch_steps`'.
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

        @property
        def report(self) -> GrowthReport | None:
            return self._watch.report

        def close(self) -> None:
            """Stop the meters (training raised and the process goes on)."""
            self._watch.close()

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self._watch.close()  # a previous train() that raised
            self._watch = StepWatch(*self._arguments, allowed=(WARN, STOP, RAISE))

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            report = self._watch.step()
            if report is None or not report.grows:
                return
            self._watch.act(report, warn=state.is_world_process_zero)
            if self._watch.on_growth == STOP:
                control.should_training_stop = True

        def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self._watch.close()
            if not self._watch.judged and state.is_world_process_zero:
                warn_at_user_frame(self._watch.too_few("LeakWatch"), TooFewStepsWarning)

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
