"""The runtime verifier: measured repros for every rule, and a leak guard for your own steps.

Everything here needs torch, which the user installs (:data:`leaklint.runtime.repro.TORCH_INSTALL`;
no extra brings it), and the ``runtime`` extra (``pip install 'leaklint-ml[runtime]'``: numpy,
psutil, matplotlib). torch is imported only when a measurement starts: the static linter imports ``leaklint.runtime.repro`` (through the rules)
without ever loading torch.

Watching a real run (a loop of your own, Lightning, transformers): :func:`watch_steps` here,
``leaklint.runtime.lightning.LeakWatch`` and ``leaklint.runtime.transformers.LeakWatch``
(:mod:`leaklint.runtime.watch` says what they share).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "assert_no_growth", "GrowthReport", "MemoryGrowthError", "MemoryGrowthWarning", "parse_size", "TooFewStepsWarning",
    "watch_steps",
]
_WATCH = ("watch_steps", "MemoryGrowthError", "MemoryGrowthWarning", "TooFewStepsWarning")


def __getattr__(name: str) -> Any:
    if name in ("assert_no_growth", "GrowthReport"):
        from leaklint.runtime import guard

        return getattr(guard, name)
    if name in _WATCH:
        from leaklint.runtime import watch

        return getattr(watch, name)
    if name == "parse_size":
        from leaklint.runtime.units import parse_size

        return parse_size
    raise AttributeError(f"module 'leaklint.runtime' has no attribute {name!r}")
