"""``leaklint run SCRIPT``: the user's own training script, in this process, under the meters.

The script runs through :mod:`runpy` with ``sys.argv`` set to ``[SCRIPT, *ARGS]``, and a
:class:`StepMeter` is told the end of every step. Where a step ends is found without touching
the script or torch:

* ``optimizer.step()``: torch's global optimizer post hook (``register_optimizer_step_post_hook``),
  counting the first optimizer that steps (a GAN's two optimizers make one step, not two);
* else ``backward()``: the return of ``torch.autograd.backward`` (which ``Tensor.backward`` and
  ``accelerator.backward`` call), seen by the trace function; chosen when two backward passes run
  before any optimizer step (gradient accumulation, a hand-written update);
* else the function named with ``--step module:function`` (``Class.method`` too): each return from
  it ends a step. Evaluation and sampling scripts have neither optimizer nor backward.

The same trace function records the lines that run in the script and in the project files it
imports (so a finding can be told "not reachable"); other frames are not traced. After the last
step the meter raises a private ``BaseException`` (so a script's ``except Exception`` does not
swallow it), which ends the script; hooks, the trace function, ``sys.argv`` and ``sys.path[0]``
are restored whatever happens.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import runpy
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

from leaklint.runtime.attribution import installed_dirs
from leaklint.runtime.guard import DEFAULT_HOST_TOLERANCE, DEFAULT_TOLERANCE, GrowthReport
from leaklint.runtime.steps import DEFAULT_STEPS, DEFAULT_WARMUP, DEFAULT_WORKERS_TOLERANCE, FirstOptimizer, StepMeter, phase_sizes
from leaklint.runtime.units import parse_size

__all__ = ["DEFAULT_STEPS", "DEFAULT_WARMUP", "RunResult", "ScriptError", "TooFewSteps", "phase_sizes", "run_script", "StepTarget"]

OPTIMIZER = "optimizer.step()"
BACKWARD = "backward()"


class _StopScript(BaseException):
    """Raised at the boundary after the last step needed."""


class ScriptError(Exception):
    """The user's script raised (``error`` is what it raised) or could not be run."""

    def __init__(self, message: str, error: BaseException | None = None) -> None:
        super().__init__(message)
        self.error = error


class TooFewSteps(Exception):
    """The script ended before ``warmup + measured`` steps ran."""

    def __init__(self, seen: int, needed: int, boundary: str | None) -> None:
        if seen == 0:
            message = (
                "the script finished without a step boundary: it never called optimizer.step() or backward(); "
                "name the function that runs one step with --step module:function"
                if boundary is None or boundary in (OPTIMIZER, BACKWARD) else
                f"the script finished without ever returning from {boundary} (--step)"
            )
        else:
            message = (
                f"the script finished after {seen} step(s) ({boundary} boundaries); leaklint run needs {needed}: "
                f"lower --steps (and --warmup), or give the script more data or epochs"
            )
        super().__init__(message)
        self.seen = seen
        self.needed = needed


@dataclass(frozen=True)
class StepTarget:
    """The function named by ``--step``: its source file and qualified name."""

    filename: str
    qualname: str

    @classmethod
    def parse(cls, spec: str, script: str) -> "StepTarget":
        """``module:function`` (``__main__`` or the script's own name for the script itself;
        ``function`` may be ``Class.method``). Raises ValueError with a one-line reason."""
        module, sep, qualname = spec.partition(":")
        if not sep or not module or not qualname:
            raise ValueError(f"--step {spec!r}: expected module:function, e.g. train:train_step or __main__:Trainer.step")
        script_path = os.path.abspath(script)
        if module in ("__main__", os.path.splitext(os.path.basename(script_path))[0]):
            return cls(script_path, qualname)
        if module.endswith(".py") or os.sep in module:
            path = os.path.abspath(module)
            if not os.path.isfile(path):
                raise ValueError(f"--step {spec!r}: no such file {module}")
            return cls(path, qualname)
        saved = sys.path[:]
        sys.path.insert(0, os.path.dirname(script_path))
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError) as problem:
            raise ValueError(f"--step {spec!r}: cannot find module {module}: {problem}") from None
        finally:
            sys.path[:] = saved
        if found is None or not found.origin or not os.path.isfile(found.origin):
            raise ValueError(f"--step {spec!r}: no module named {module} next to the script or on the path")
        return cls(os.path.abspath(found.origin), qualname)


@dataclass(frozen=True)
class WorkersGrowth:
    """The DataLoader workers' private memory (USS of the child processes) per measured step."""

    growth_per_step: float | None
    tolerance: float
    readings: tuple[float, ...]
    unavailable: str | None = None

    @property
    def grows(self) -> bool:
        return self.growth_per_step is not None and self.growth_per_step > self.tolerance


@dataclass
class RunResult:
    """What one ``leaklint run`` measured: ``report`` judges growth, ``lines`` maps each project
    file that ran (absolute path) to how many times each of its lines ran, ``steps`` the
    boundaries seen."""

    script: str
    boundary: str
    steps: int
    warmup: int
    report: GrowthReport
    lines: dict[str, dict[int, int]] = field(default_factory=dict)
    workers: WorkersGrowth | None = None

    @property
    def grows(self) -> bool:
        return self.report.grows or (self.workers is not None and self.workers.grows)

    @property
    def measured_steps(self) -> int:
        return self.steps - self.warmup

    def runs(self, path: str, line: int) -> int:
        """How many times ``line`` of ``path`` ran (0: never)."""
        return self.lines.get(os.path.abspath(path), {}).get(line, 0)


class _Boundaries:
    """Decides which events end a step (see the module docs) and feeds the meter."""

    def __init__(self, meter: StepMeter, target: StepTarget | None) -> None:
        self.meter = meter
        self.mode: str | None = None if target is None else target.qualname
        self.fixed = target is not None
        self._first = FirstOptimizer()
        self._backwards = 0

    def _end_step(self) -> None:
        if self.meter.boundary():
            raise _StopScript

    def optimizer_stepped(self, optimizer: Any) -> None:
        if self.fixed or self.mode == BACKWARD:
            return
        self.mode = OPTIMIZER
        self._backwards = 0
        if self._first.is_first(optimizer):
            self._end_step()

    def backward_returned(self) -> None:
        if self.fixed or self.mode == OPTIMIZER:
            return
        self._backwards += 1
        if self.mode is None and self._backwards >= 2:
            self.mode = BACKWARD
        if self.mode == BACKWARD:
            self._end_step()

    def function_returned(self) -> None:
        self._end_step()


def project_root(script: str) -> str:
    """The folder of the nearest ``pyproject.toml`` or ``.git`` above the script, else its own."""
    start = os.path.dirname(os.path.abspath(script))
    folder = start
    while True:
        if os.path.exists(os.path.join(folder, "pyproject.toml")) or os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return start
        folder = parent


def _tracer(root: str, lines: dict[str, dict[int, int]], boundaries: _Boundaries, target: StepTarget | None) -> Callable:
    """The ``sys.settrace`` function: line events for project files, a return event for the
    backward and ``--step`` functions, nothing for any other frame (decided once per code object)."""
    import torch.autograd

    backward_code = torch.autograd.backward.__code__
    installed = installed_dirs()
    root = os.path.abspath(root) + os.sep
    decisions: dict[Any, Any] = {}

    def returns(call: Callable[[], None]) -> Callable:
        def local(frame, event, arg):  # type: ignore[no-untyped-def]
            if event == "return":
                call()
            return local
        return local

    def step_local(record: dict[int, int]) -> Callable:
        def local(frame, event, arg):  # type: ignore[no-untyped-def]
            if event == "line":
                record[frame.f_lineno] = record.get(frame.f_lineno, 0) + 1
            elif event == "return":
                boundaries.function_returned()
            return local
        return local

    def decide(code):  # type: ignore[no-untyped-def]
        if code is backward_code:
            return returns(boundaries.backward_returned)
        if code.co_filename.startswith("<"):
            return None  # generated code (<string>, <frozen ...>): no file to lint
        filename = os.path.abspath(code.co_filename)
        is_target = target is not None and filename == target.filename and code.co_qualname == target.qualname
        in_project = filename.startswith(root) and not filename.startswith(installed)
        if in_project:
            record = lines.setdefault(filename, {})
            if is_target:
                return step_local(record)

            def local(frame, event, arg):  # type: ignore[no-untyped-def]
                if event == "line":
                    record[frame.f_lineno] = record.get(frame.f_lineno, 0) + 1
                return local
            return local
        if is_target:
            return returns(boundaries.function_returned)
        return None

    def global_(frame, event, arg):  # type: ignore[no-untyped-def]
        code = frame.f_code
        try:
            decision = decisions[code]
        except KeyError:
            decision = decisions[code] = decide(code)
        return decision

    return global_


def run_script(
    script: str,
    args: tuple[str, ...] | list[str] = (),
    steps: int = DEFAULT_STEPS,
    warmup: int = DEFAULT_WARMUP,
    tolerance: str | float = DEFAULT_TOLERANCE,
    host_tolerance: str | float = DEFAULT_HOST_TOLERANCE,
    step: StepTarget | None = None,
    device: str = "auto",
    workers: bool = False,
    workers_tolerance: str | float = DEFAULT_WORKERS_TOLERANCE,
    script_stdout: Any = None,
) -> RunResult:
    """Run ``script`` with ``args`` until ``steps`` steps have run, measuring as the module docs
    say. Raises :class:`ScriptError` when the script raises, :class:`TooFewSteps` when it ends
    first, ``ModuleNotFoundError`` (name ``torch``) without torch. ``script_stdout``: where the
    script's ``print`` goes (default: standard output)."""
    from leaklint.runtime.guard import _torch

    _torch()
    from torch.optim.optimizer import register_optimizer_step_post_hook

    meter = StepMeter(steps, warmup, device, workers=workers)
    boundaries = _Boundaries(meter, step)
    path = os.path.abspath(script)
    lines: dict[str, dict[int, int]] = {path: {}}
    handle = register_optimizer_step_post_hook(lambda optimizer, args, kwargs: boundaries.optimizer_stepped(optimizer))
    saved_argv, saved_path0 = sys.argv[:], sys.path[0] if sys.path else None
    sys.argv = [script, *args]
    if sys.path:
        sys.path[0] = os.path.dirname(path)
    else:
        sys.path.append(os.path.dirname(path))
    saved_trace = sys.gettrace()
    sys.settrace(_tracer(project_root(script), lines, boundaries, step))
    redirect = contextlib.redirect_stdout(script_stdout) if script_stdout is not None else contextlib.nullcontext()
    try:
        with redirect:
            runpy.run_path(path, run_name="__main__")
    except _StopScript:
        pass
    except SystemExit as exit_:
        if exit_.code not in (None, 0) and not meter.done:
            raise ScriptError(f"{script} exited with status {exit_.code} after {meter.seen} step(s)", exit_) from None
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - whatever the user's script raises is reported, not re-raised
        raise ScriptError(f"{script} raised {type(error).__name__}: {error}", error) from None
    finally:
        sys.settrace(saved_trace)
        handle.remove()
        meter.finish()
        sys.argv = saved_argv
        if saved_path0 is not None and sys.path:
            sys.path[0] = saved_path0
    if not meter.done:
        raise TooFewSteps(meter.seen, meter.needed, boundaries.mode)
    report = meter.report(tolerance, host_tolerance)
    ran = {name: found for name, found in lines.items() if found or name == path}
    measured_workers = None
    if workers:
        measured_workers = WorkersGrowth(meter.workers_growth(), parse_size(workers_tolerance), tuple(meter.workers or ()), meter.workers_unavailable)
    return RunResult(script, boundaries.mode or OPTIMIZER, meter.seen, warmup, report, ran, measured_workers)
