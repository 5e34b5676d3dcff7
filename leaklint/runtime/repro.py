"""What a rule's runtime repro looks like; importing this module never imports torch.

A rule class carries its repro as a nested ``class Repro(Repro)``: ``setup`` builds a small seeded
model and data on ``ctx.device``, ``leaky`` and ``fixed`` are one iteration of the loop body
before and after the rule's fix. Anything that lives across iterations in the real loop (an
accumulator, a hidden state, a list) lives on ``ctx``; what is local to one iteration stays local.
The methods import torch themselves, so the linter can load every rule without it.
"""

from __future__ import annotations

import importlib.util
import textwrap
from types import SimpleNamespace
from typing import ClassVar

#: Frameworks whose absence *skips* a rule ("skipped: tensorflow not installed") instead of failing
#: it: a rule about another framework's API (TensorFlow's, Lightning's trainer) cannot be measured
#: without that framework, and its absence says nothing about the rule. Lightning requires torch,
#: so it cannot be in an extra either (see below). numpy, psutil and matplotlib come with
#: ``pip install 'leaklint-ml[runtime]'``, so a missing one is a broken install: the rule fails with
#: an install hint. torch is needed by everything and installed by the user (see below).
OPTIONAL_FRAMEWORKS = ("tensorflow", "lightning")
RUNTIME_EXTRA = "pip install 'leaklint-ml[runtime]'"
#: The oldest torch the runtime verifier and the guard are tested with.
MINIMUM_TORCH = (2, 1)
#: torch is in no extra: where it is not installed yet, a requirement on it makes pip fetch its
#: default wheel (on Linux a multi-gigabyte CUDA build, even on a CPU-only machine). So every
#: message names torch on its own, with the CPU wheel index and pytorch.org's selector.
TORCH_INSTALL = (
    "pip install torch --index-url https://download.pytorch.org/whl/cpu (CPU only; for CUDA, "
    "the command https://pytorch.org/get-started/locally/ gives)"
)


def install_hint(module: str) -> str:
    """The command that installs ``module`` (tensorflow and torch are in no extra of leaklint)."""
    if module == "torch":
        return TORCH_INSTALL
    return f"pip install {module}" if module in OPTIONAL_FRAMEWORKS else RUNTIME_EXTRA


def torch_too_old(version: str) -> bool:
    """Whether ``torch.__version__`` (``2.0.1+cpu``, ``2.13.0``) is older than :data:`MINIMUM_TORCH`."""
    import re

    match = re.match(r"(\d+)\.(\d+)", version)
    return match is not None and (int(match[1]), int(match[2])) < MINIMUM_TORCH


class Context(SimpleNamespace):
    """The loop's state for one variant: ``device`` plus whatever ``setup`` and the steps keep."""

    device: str


class Repro:
    """Base class of a rule's repro (see the module docs)."""

    #: Modules the repro needs; a missing one skips the rule ("skipped: tensorflow not installed").
    requires: ClassVar[tuple[str, ...]] = ("torch",)
    #: Whether tensor bytes are measured (torch repros): the growth and peak verdicts rest on them.
    tensors: ClassVar[bool] = True
    #: The host meter: ``heap`` (malloc'd bytes: autograd nodes), ``python`` (tracemalloc) or
    #: ``uss`` (DataLoader workers' private memory). See ``leaklint.runtime.host_meter``.
    host_meter: ClassVar[str] = "heap"

    def setup(self, ctx: Context) -> None:
        """Build the seeded model and data; runs once per variant, before any step."""

    def leaky(self, ctx: Context) -> None:
        raise NotImplementedError

    def fixed(self, ctx: Context) -> None:
        raise NotImplementedError

    def teardown(self, ctx: Context) -> None:
        """Undo global state ``setup`` changed (worker processes, global flags)."""

    @classmethod
    def missing(cls) -> list[str]:
        """The required modules that are not installed."""
        return [name for name in cls.requires if importlib.util.find_spec(name) is None]

    @classmethod
    def missing_frameworks(cls) -> list[str]:
        """Missing optional frameworks (tensorflow): the rule is skipped."""
        return [name for name in cls.missing() if name in OPTIONAL_FRAMEWORKS]

    @classmethod
    def missing_dependencies(cls) -> list[str]:
        """Missing modules the runtime extra should have installed: the rule fails."""
        return [name for name in cls.missing() if name not in OPTIONAL_FRAMEWORKS]

    @classmethod
    def source(cls) -> str:
        """The repro's source, as ``leaklint rule CODE`` shows it."""
        import inspect

        try:
            return textwrap.dedent(inspect.getsource(cls))
        except (OSError, TypeError):
            return f"# source of {cls.__qualname__} is not available\n"
