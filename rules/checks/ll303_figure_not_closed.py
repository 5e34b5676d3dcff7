"""How LL303 figure-not-closed finds its violations: ``check`` and its helpers.

The rule itself (documentation, examples, gate and runtime repro) is
:mod:`leaklint.rules.ll303_figure_not_closed`. Only files that pass the gate import this
module, and with it libcst and the analysis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from leaklint.analysis import nodes as cst
from leaklint.analysis.calls import call_graph
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.steps import is_framework_hook
from leaklint.analysis.structure import FunctionInfo, LoopInfo, bound_names
from leaklint.analysis.walk import dotted_names_in, not_into_scopes, walk
from leaklint.findings import Confidence
from leaklint.rule import Violation
from leaklint.rules.ll303_figure_not_closed import FIGURE_CREATORS


CLOSERS = frozenset({"matplotlib.pyplot.close", "pylab.close"})
_SHOW = frozenset({"matplotlib.pyplot.show", "pylab.show"})
#: ``writer.add_figure(tag, fig, step)`` (TensorBoard) closes the figure unless ``close=False``.
_CLOSING_METHODS = frozenset({"add_figure"})
#: Methods that frameworks call once per step or epoch (Lightning, Keras, HF and Ignite callbacks).
_MAX_CALL_DEPTH = 3
_STORES = frozenset({"append", "extend", "insert", "add"})


@dataclass(frozen=True)
class Creation:
    """A call that leaves a new open figure behind: a pyplot call, or a local figure factory."""

    call: cst.Call
    statement: StatementFact
    #: The local function whose returned figure this is (None: pyplot itself).
    factory: FunctionInfo | None = None


def check(facts: ModuleFacts) -> Iterator[Violation]:
    """LL303's violations in one file (``FigureNotClosed.check``)."""
    if not facts.imports.imports_anything_from("matplotlib", "pylab", "seaborn"):
        return
    analysis = _FigureAnalysis(facts)
    for creation in analysis.pyplot_creations():
        finding = analysis.judge(creation)
        if finding is not None:
            yield finding
    for creation in analysis.factory_calls():
        finding = analysis.judge(creation)
        if finding is not None:
            yield finding


class _FigureAnalysis:
    """Figure creations, closes and local call sites of one module."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self._graph = call_graph(facts)
        self._closing_cache: dict[cst.CSTNode, bool] = {}
        self._factories: dict[FunctionInfo, bool] = {}
        self._creations: list[Creation] | None = None

    # --- what creates and what closes ---------------------------------------------------------
    def pyplot_creations(self) -> list[Creation]:
        if self._creations is None:
            self._creations = []
            for call, statement, _ in self._graph.resolved:
                qualified = self.facts.imports.resolve(call.func)
                if qualified in FIGURE_CREATORS and not _reuses_figure(call, qualified):
                    self._creations.append(Creation(call, statement))
        return self._creations

    def factory_calls(self) -> list[Creation]:
        """Calls of local functions that return a figure they created."""
        found = []
        for call, statement, callee in self._graph.resolved:
            if callee is not None and self.returns_figure(callee):
                found.append(Creation(call, statement, factory=callee))
        return found

    def returns_figure(self, function: FunctionInfo) -> bool:
        if function not in self._factories:
            self._factories[function] = False  # recursion guard
            self._factories[function] = self._returns_created_figure(function)
        return self._factories[function]

    def _returns_created_figure(self, function: FunctionInfo) -> bool:
        """The function returns a figure it created (with pyplot, or with another local factory)."""
        if function.node is None:
            return False
        for call, statement, callee in self._graph.resolved:
            if statement.function is not function:
                continue
            qualified = self.facts.imports.resolve(call.func)
            creates = qualified in FIGURE_CREATORS and not _reuses_figure(call, qualified)
            if not creates:
                creates = callee is not None and callee is not function and self.returns_figure(callee)
            if creates and self._returned_to_caller(Creation(call, statement)):
                return True
        return False

    def closes_within(self, scope: cst.CSTNode) -> bool:
        """Whether ``scope`` (a loop, a function body) contains a close of pyplot figures."""
        if scope not in self._closing_cache:
            self._closing_cache[scope] = any(
                isinstance(node, cst.Call) and self._is_close(node) for node in walk(scope, into=not_into_scopes)
            )
        return self._closing_cache[scope]

    def _is_close(self, call: cst.Call) -> bool:
        if self.facts.imports.resolve(call.func) in CLOSERS:
            return True
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _CLOSING_METHODS:
            return not any(
                arg.keyword is not None and arg.keyword.value == "close" and _is_false(arg.value) for arg in call.args
            )
        return False

    def shows_within(self, scope: cst.CSTNode) -> bool:
        return any(
            isinstance(node, cst.Call) and self.facts.imports.resolve(node.func) in _SHOW
            for node in walk(scope, into=not_into_scopes)
        )

    # --- local calls ------------------------------------------------------------------------------
    def call_sites(self, function: FunctionInfo) -> list[tuple[cst.Call, StatementFact]]:
        return self._graph.sites_of(function)

    def repeated_by(self, function: FunctionInfo, depth: int = 0) -> str | None:
        """Why ``function`` runs again and again without its figures being closed: a loop around one of
        its calls, a caller that is itself repeated, or a framework hook name."""
        if is_framework_hook(function):
            return f"'{function.name}' is called by the framework every step or epoch"
        if depth >= _MAX_CALL_DEPTH:
            return None
        for _, statement in self.call_sites(function):
            caller = statement.function
            if statement.loops:
                if not any(self.closes_within(loop.node) for loop in statement.loops):
                    return f"'{function.name}' is called in {self._loop_label(statement.loops[-1], caller)}"
                continue
            if caller.node is not None and self.closes_within(caller.node.body):
                continue
            why = self.repeated_by(caller, depth + 1) if caller.node is not None else None
            if why is not None:
                return f"'{function.name}' is called by '{caller.name}', and {why}"
        return None

    # --- the verdict ------------------------------------------------------------------------------
    def judge(self, creation: Creation) -> Violation | None:
        statement = creation.statement
        function = statement.function
        if statement.loops:
            return self._in_loop(creation, statement.loops)
        if function.node is None or self.closes_within(function.node.body):
            return None
        if self._handed_to_closer(creation) or self._returned_to_caller(creation):
            return None
        why = self.repeated_by(function)
        if why is None:
            if self.call_sites(function) or function.name in ("main", "__main__"):
                return None  # called here, but not repeatedly
            message = (
                f"{self._what(creation)} in '{function.name}' is never closed or returned: every call leaves "
                "one more open figure in pyplot (no caller in this file)"
            )
            return self._violation(creation, message, Confidence.LOW)
        message = (
            f"{self._what(creation)} in '{function.name}' is never closed or returned, and {why}: "
            "pyplot keeps one more open figure per call"
        )
        return self._violation(creation, message, Confidence.MEDIUM)

    def _in_loop(self, creation: Creation, loops: tuple[LoopInfo, ...]) -> Violation | None:
        if any(self.closes_within(loop.node) for loop in loops):
            return None
        if self._handed_to_closer(creation) or self._returned_to_caller(creation):
            return None
        function = creation.statement.function
        closed_later = self.closes_within(self._body(function)) or self._closed_by_callers(function)
        iteration = any(loop.repeats_per_input for loop in loops)
        if closed_later and not iteration:
            return None  # a figure per item of a bounded loop, all closed afterwards
        if any(self.shows_within(loop.node) for loop in loops):
            confidence = Confidence.LOW
        elif iteration and not closed_later and creation.factory is None:
            confidence = Confidence.HIGH
        else:
            confidence = Confidence.MEDIUM
        later = " (only closed after the loop)" if closed_later else ""
        message = (
            f"{self._what(creation)} is created on every iteration of {self._loop_label(loops[-1], function)} "
            f"and never closed{later}: pyplot keeps a reference to every open figure, so memory grows each iteration"
        )
        return self._violation(creation, message, confidence)

    def _closed_by_callers(self, function: FunctionInfo) -> bool:
        """Every caller in the file closes figures after calling ``function`` (``plot_all(); plt.close("all")``)."""
        sites = self.call_sites(function) if function.node is not None else []
        return bool(sites) and all(self.closes_within(self._body(statement.function)) for _, statement in sites)

    def _body(self, function: FunctionInfo) -> cst.CSTNode:
        return self.facts.module if function.node is None else function.node.body

    def _handed_to_closer(self, creation: Creation) -> bool:
        """``writer.add_figure(tag, plt.figure(...))``: the creation is an argument of a closing call."""
        return any(
            isinstance(node, cst.Call) and node is not creation.call and self._is_close(node)
            and any(inner is creation.call for arg in node.args for inner in walk(arg.value))
            for node in walk(creation.statement.node, into=not_into_scopes)
        )

    def _returned_to_caller(self, creation: Creation) -> bool:
        """``return fig`` / ``return fig, ax`` / ``figs.append(fig)`` ... ``return figs``: the caller owns
        the figure (and closes it or not: its call is judged in turn)."""
        function = creation.statement.function
        if function.node is None:
            return False
        if isinstance(creation.statement.node, cst.Return):
            return True  # return plt.subplots(...)
        names = _figure_names(creation.statement.node, creation.call)
        if not names:
            return False
        holders = set(names)
        for node in walk(function.node.body, into=not_into_scopes):
            is_store = (
                isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _STORES
            )
            if is_store and any(dotted_name(arg.value) in names for arg in node.args):
                holder = dotted_name(node.func.value)
                if holder is not None:
                    holders.add(holder)
        return any(
            isinstance(node, (cst.Return, cst.Yield))
            and node.value is not None
            and bool(dotted_names_in(node.value) & holders)
            for node in walk(function.node.body, into=not_into_scopes)
        )

    def _what(self, creation: Creation) -> str:
        if creation.factory is not None:
            return f"the figure returned by '{creation.factory.name}'"
        return f"the figure from '{self.facts.describe(creation.call.func)}(...)'"

    def _loop_label(self, loop: LoopInfo, function: FunctionInfo) -> str:
        line = self.facts.line_of(loop.node)
        where = f" at line {line}" if line is not None else ""
        kind = "the epoch/data loop" if loop.repeats_per_input else "the loop"
        return f"{kind}{where} of {_function_label(function)}"

    @staticmethod
    def _violation(creation: Creation, message: str, confidence: Confidence) -> Violation:
        return Violation(node=creation.call, message=message, confidence=confidence, statement=creation.statement.line)


def _reuses_figure(call: cst.Call, qualified: str) -> bool:
    """``plt.figure(1)``, ``plt.figure("loss")``, ``plt.subplots(num=2, clear=True)``: one figure, reused."""
    for position, arg in enumerate(call.args):
        if arg.star:
            continue
        if arg.keyword is not None:
            is_num = arg.keyword.value == "num"
        else:
            is_num = position == 0 and qualified.endswith(".figure")  # figure(num, ...); subplots(nrows, ...)
        if is_num and isinstance(arg.value, (cst.Integer, cst.SimpleString, cst.ConcatenatedString)):
            return True
    return False


def _figure_names(statement: cst.BaseSmallStatement, call: cst.Call) -> set[str]:
    """Names bound to the new figure: ``fig`` in ``fig = plt.figure()`` / ``fig, ax = plt.subplots()``."""
    if not isinstance(statement, cst.Assign) or statement.value is not call:
        return set()
    names = set()
    for target in statement.targets:
        if isinstance(target.target, cst.Tuple):
            first = target.target.elements[0].value if target.target.elements else None
            names.update(bound_names(first) if first is not None else [])
        else:
            names.update(bound_names(target.target))
    return names


def _is_false(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def _function_label(function: FunctionInfo) -> str:
    return "the module" if function.is_module_level else f"'{function.name}'"
