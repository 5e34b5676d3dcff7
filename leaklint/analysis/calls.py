"""Calls of the file's own functions: which local function a call runs, and where a function is
called from.

Rules follow a fact across a call boundary this way: a figure created in a helper that a loop
calls, a hook registered in a function run every step, an ``except`` clause that calls the function
it is in again. Calls through imports or unknown objects are not followed.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from leaklint.analysis.structure import ClassInfo, FunctionInfo

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.places import Place
    from leaklint.analysis.provenance import StatementFact


def callee_name(func: cst.BaseExpression) -> str | None:
    """The last name of a callee: ``f`` for ``f(...)``, ``a.b.f(...)``; None for ``g()(...)``."""
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


def function_named(name: str, scope: FunctionInfo, facts: ModuleFacts) -> cst.FunctionDef | None:
    """The function ``name`` means in ``scope``: a nested def of it or of an enclosing function,
    else a module-level function."""
    structure = facts.structure
    current: FunctionInfo | None = scope
    while current is not None:
        found = structure.nested_functions.get((current, name))
        if found is not None:
            return found
        current = current.parent
    return structure.module_functions.get(name)


def local_callee(call: cst.Call, scope: FunctionInfo, facts: ModuleFacts) -> FunctionInfo | None:
    """The function of this file that ``call`` (made in ``scope``) runs: ``helper(...)`` (also
    where ``helper`` is the nested function a call returned),
    ``self.method(...)`` / ``cls.method(...)`` (found in the class or its local bases), or a
    method of an object the provenance pass knows was built from a class of the file
    (``trainer.train_step(batch)``, ``meter.update(loss)``), and such an object's ``__call__``
    (``encoder(texts)`` where ``encoder = Encoder(...)``)."""
    func = call.func
    node: cst.FunctionDef | None = None
    if isinstance(func, cst.Name):
        node = function_named(func.value, scope, facts)
        if node is None:
            made = facts.value(func).function  # policy = make_policy(net): the def it returned
            node = made if isinstance(made, cst.FunctionDef) else None
    elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in ("self", "cls"):
        if scope.cls is not None:
            node = scope.cls.find_method(func.attr.value)
    elif isinstance(func, cst.Attribute):
        cls = facts.value(func.value).cls
        if isinstance(cls, ClassInfo):
            node = cls.find_method(func.attr.value)
    if node is None and isinstance(func, (cst.Name, cst.Attribute)) and _defines_call(facts):
        # embed(texts) / self.embed(texts), where embed = Encoder(...): the class's __call__
        cls = facts.value(func).cls
        if isinstance(cls, ClassInfo):
            node = cls.find_method("__call__")
    return facts.structure.functions.get(node) if node is not None else None


def _defines_call(facts: ModuleFacts) -> bool:
    """Some class of the file defines ``__call__`` (most files have none: nothing to look up)."""
    return any("__call__" in cls.methods for cls in facts.structure.classes.values())


class CallGraph:
    """Calls of local functions, resolved once, looked up both ways (each table on first use)."""

    def __init__(self, facts: ModuleFacts) -> None:
        self._facts = facts

    @cached_property
    def resolved(self) -> list[tuple[cst.Call, StatementFact, FunctionInfo | None]]:
        """(call, the statement making it, the local function it runs or None), statement by statement."""
        facts = self._facts
        return [(call, fact, local_callee(call, fact.function, facts)) for call, fact in facts.index.statement_calls]

    @cached_property
    def _sites(self) -> dict[FunctionInfo, list[tuple[cst.Call, StatementFact]]]:
        sites: dict[FunctionInfo, list[tuple[cst.Call, StatementFact]]] = {}
        for call, fact, callee in self.resolved:
            if callee is not None:
                sites.setdefault(callee, []).append((call, fact))
        return sites

    @cached_property
    def _callees(self) -> dict[FunctionInfo, list[tuple[cst.Call, FunctionInfo]]]:
        callees: dict[FunctionInfo, list[tuple[cst.Call, FunctionInfo]]] = {}
        for call, fact, callee in self.resolved:
            if callee is not None:
                callees.setdefault(fact.function, []).append((call, callee))
        return callees

    def sites_of(self, function: FunctionInfo) -> list[tuple[cst.Call, StatementFact]]:
        """The statements that call ``function``, with the call, in statement order."""
        return self._sites.get(function, [])

    def callees_of(self, function: FunctionInfo) -> list[tuple[cst.Call, FunctionInfo]]:
        """The local functions ``function``'s own statements call, with the call, in order."""
        return self._callees.get(function, [])

    def places_of(self, function: FunctionInfo) -> list[Place]:
        """Where ``function`` is called, with ancestors: like :meth:`sites_of`, but for calls in
        any expression (loop headers, decorators, comprehensions) too."""
        facts = self._facts
        # an object's __call__ runs through calls of whatever names the object (`scale(x)`)
        candidates = facts.index.ordered_calls if function.name == "__call__" else facts.index.calls_named(function.name)
        return [
            place
            for place in candidates
            if local_callee(place.node, caller_of(place, facts), facts) is function  # type: ignore[arg-type]
        ]


def caller_of(place: Place, facts: ModuleFacts) -> FunctionInfo:
    """The function whose body holds ``place`` (a lambda or a class body counts as the function
    around it; decorators and defaults run around their ``def``), else the module's top level."""
    chain = place.chain
    for index in range(len(chain) - 2, -1, -1):
        node = chain[index]
        if isinstance(node, cst.FunctionDef) and chain[index + 1] is node.body:
            return facts.structure.functions.get(node, facts.structure.top)
    return facts.structure.top


def call_graph(facts: ModuleFacts) -> CallGraph:
    """The module's :class:`CallGraph`, built once per file."""
    return facts.derived(CallGraph)


def constructions(facts: ModuleFacts, cls: ClassInfo) -> list[tuple[cst.Call, StatementFact]]:
    """Where the file builds an object of ``cls`` by its name (``Grapher(...)``): the calls that run
    its ``__init__``, with their statements."""
    return [
        (call, statement)
        for call, statement, _ in call_graph(facts).resolved
        if isinstance(call.func, cst.Name) and call.func.value == cls.name and facts.structure.classes.get(cls.node) is cls
    ]
