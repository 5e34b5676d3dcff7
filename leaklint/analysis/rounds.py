"""Replaying runs of the provenance pass whose inputs did not change since the last round.

``ModuleFacts`` interprets the top level and every function in up to three rounds, each round
reading what the previous one found (callee return values, ``self.x`` values, module-level
bindings, which functions only run under ``no_grad``). Most functions see the same inputs in
round 2 as in round 1, and in round 3 as in round 2, and so compute the same thing again: that
was most of the time spent in rounds 2 and 3.

Interpreting one function is deterministic given the module (code, structure, imports), the
gradient mode it starts in, and what it reads through its :class:`~provenance.Inputs`. So each
run logs those reads, value by value, at the time it makes them; the next round first asks the
same questions of the new state, and when every answer is the same (compared strictly, see
:func:`same`) it merges the run's recording again instead of interpreting the function anew.
The result is identical to interpreting it, which ``tests/analysis/test_analysis_rounds.py`` checks.

Why the log is complete: the interpreter writes only its own recording, and reads outside it
only through ``Inputs`` (besides the module's fixed structure; the loop flags the pass sets on
``LoopInfo`` only ever go from False to True and are only read to avoid setting them twice).
While a function runs, none of the sources ``Inputs`` reads change, except its own summary when
it calls itself in the first round: such a run is never replayed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Any, Callable, Mapping, TypeVar

import libcst as cst
from leaklint.analysis.names import ImportMap
from leaklint.analysis.provenance import FunctionInterpreter, Inputs, Recording, merge_run
from leaklint.analysis.structure import ClassInfo, FunctionInfo, GradMode, ModuleStructure
from leaklint.analysis.values import Value

T = TypeVar("T")

#: Replay runs whose inputs did not change. Off only to check that replaying changes nothing.
REPLAY = True


def same(a: object, b: object) -> bool:
    """Equal in every respect the interpreter can observe. ``Value.__eq__`` ignores ``origin``
    (which messages quote) and ``cls`` (which methods an instance has): compared here too,
    through the elements of tuples, dicts and ``Value.items``."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, Value):
        assert isinstance(b, Value)
        if a != b or a.origin != b.origin or a.cls is not b.cls:
            return False
        if (a.element is not None or b.element is not None) and not same(a.element, b.element):
            return False
        if a.fields is not None and not same(tuple(value for _, value in a.fields), tuple(value for _, value in b.fields)):  # type: ignore[union-attr]
            return False
        return a.items is None or same(a.items, b.items)
    if isinstance(a, tuple):
        assert isinstance(b, tuple)
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return a.keys() == b.keys() and all(same(value, b[key]) for key, value in a.items())
    return a == b  # strings, sets of names, booleans, None


def snapshot(answer: object) -> object:
    """A copy of an answer that later changes to its source cannot affect."""
    if isinstance(answer, dict):
        return dict(answer)
    if isinstance(answer, (set, frozenset)):
        return frozenset(answer)
    return answer  # values, tuples of values and booleans, None: immutable


Question = tuple[str, tuple[Any, ...]]


class LoggedInputs(Inputs):
    """``Inputs`` that remember every answer they gave, as it was when given."""

    def __init__(self, function: FunctionInfo, round: Recording, previous: Recording | None, outer_env: Mapping[str, Value]) -> None:
        super().__init__(function, round, previous, outer_env)
        #: (question, arguments) -> answer, the first time each was asked: the sources do not
        #: change while the function runs (see the module docstring).
        self.log: dict[Question, object] = {}
        #: False when the run read its own summary while building it (recursion, first round).
        self.replayable = True

    def _note(self, question: str, arguments: tuple[Any, ...], answer: T) -> T:
        key = (question, arguments)
        if key not in self.log:
            self.log[key] = snapshot(answer)
        return answer

    def callee_result(self, function: FunctionInfo) -> tuple[Value | None, bool, bool] | None:
        if function is self.function and self.previous is None:
            self.replayable = False
        return self._note("callee_result", (function,), super().callee_result(function))

    def callee_param_stores(self, method: FunctionInfo) -> dict[str, tuple[tuple[str, str], ...]] | None:
        if method is self.function and self.previous is None:
            self.replayable = False
        return self._note("callee_param_stores", (method,), super().callee_param_stores(method))

    def callee_literals(self, function: FunctionInfo) -> dict[str, object] | None:
        return self._note("callee_literals", (function,), super().callee_literals(function))

    def callee_arguments(self, function: FunctionInfo) -> dict[str, Value] | None:
        return self._note("callee_arguments", (function,), super().callee_arguments(function))

    def upstream_of_backward(self) -> AbstractSet[str]:
        return self._note("upstream_of_backward", (), super().upstream_of_backward())

    def outer(self, name: str) -> Value | None:
        return self._note("outer", (name,), super().outer(name))

    def class_attributes(self, cls: ClassInfo) -> dict[str, Value]:
        return self._note("class_attributes", (cls,), super().class_attributes(cls))


@dataclass
class Run:
    """One interpretation of a function: what it started from, read, and recorded."""

    grad: GradMode
    log: dict[Question, object]
    recorded: Recording
    replayable: bool

    def would_repeat(self, grad: GradMode, inputs: Inputs) -> bool:
        """Interpreting the function again from ``grad`` with ``inputs`` would do the same."""
        if not self.replayable or grad is not self.grad:
            return False
        for (question, arguments), answer in self.log.items():
            ask: Callable[..., object] = getattr(inputs, question)
            if not same(snapshot(ask(*arguments)), answer):
                return False
        return True


class Rounds:
    """Interprets functions round after round, replaying runs whose inputs did not change."""

    def __init__(self, module: cst.Module, imports: ImportMap, structure: ModuleStructure, *, replay: bool | None = None) -> None:
        self.module = module
        self.imports = imports
        self.structure = structure
        self.replay = REPLAY if replay is None else replay
        self._runs: dict[FunctionInfo, Run] = {}
        #: How many runs were interpreted and replayed (for measurements).
        self.interpreted = 0
        self.replayed = 0

    def interpret(
        self,
        function: FunctionInfo,
        grad: GradMode,
        round: Recording,
        previous: Recording | None,
        outer_env: Mapping[str, Value],
    ) -> None:
        """Interpret ``function`` starting in ``grad`` and merge what it recorded into ``round``."""
        if not self.replay:
            interpreter = FunctionInterpreter(self.module, self.imports, self.structure, function, Inputs(function, round, previous, outer_env))
            interpreter.run(grad)
            merge_run(round, function, interpreter.rec)
            self.interpreted += 1
            return
        last = self._runs.get(function)
        if last is not None and previous is not None and last.would_repeat(grad, Inputs(function, round, previous, outer_env)):
            merge_run(round, function, last.recorded)
            self.replayed += 1
            return
        inputs = LoggedInputs(function, round, previous, outer_env)
        interpreter = FunctionInterpreter(self.module, self.imports, self.structure, function, inputs)
        interpreter.run(grad)
        self._runs[function] = Run(grad, inputs.log, interpreter.rec, inputs.replayable)
        merge_run(round, function, interpreter.rec)
        self.interpreted += 1
