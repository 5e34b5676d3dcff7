"""``facts.index``: per-module lookups that several rules need, built once per file on first use.

Two views of the same module. The statement view groups the statement facts (which carry
values, loops and grad mode) by function and by loop, lists every call made by a statement and
every value assigned to a name. The syntax view walks the whole tree once with ancestors, so it
also sees calls in decorators, loop headers and comprehensions, each as a :class:`Place`.
Every table is computed the first time a rule asks for it; a file no rule asks about pays nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst
from leaklint.analysis.calls import callee_name
from leaklint.analysis.places import Place, walk_with_ancestors
from leaklint.analysis.structure import ClassInfo, FunctionInfo, bound_names
from leaklint.analysis.walk import calls_in

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.provenance import StatementFact

_PLACE_TYPES = frozenset({cst.Call, cst.Assign, cst.AnnAssign, cst.FunctionDef})


@dataclass
class _Places:
    """What one walk with ancestors collects."""

    #: Calls by the callee's last name (``empty_cache`` for ``torch.cuda.empty_cache()``).
    calls: dict[str, list[Place]] = field(default_factory=dict)
    #: Decorated ``def`` statements, by each decorator's last name (``function`` for ``@tf.function``).
    definitions: dict[str, list[Place]] = field(default_factory=dict)
    #: Every assignment with a value (``Assign`` / ``AnnAssign``).
    assignments: list[Place] = field(default_factory=list)
    #: Every call with a named callee, in source order.
    ordered_calls: list[Place] = field(default_factory=list)


class ModuleIndex:
    """Statements, calls and bindings of one module, grouped the ways rules look them up."""

    def __init__(self, facts: ModuleFacts) -> None:
        self._facts = facts

    # --- statements -----------------------------------------------------------------------------
    @cached_property
    def _statements(self) -> tuple[dict[FunctionInfo, list[StatementFact]], dict[cst.CSTNode, list[StatementFact]]]:
        by_function: dict[FunctionInfo, list[StatementFact]] = {}
        by_loop: dict[cst.CSTNode, list[StatementFact]] = {}
        for fact in self._facts.statements():
            by_function.setdefault(fact.function, []).append(fact)
            for loop in fact.loops:
                by_loop.setdefault(loop.node, []).append(fact)
        return by_function, by_loop

    def statements_of(self, function: FunctionInfo) -> list[StatementFact]:
        """The statements that run in ``function``'s own body (not in its nested defs), in order."""
        return self._statements[0].get(function, [])

    def statements_in_loop(self, loop: cst.CSTNode) -> list[StatementFact]:
        """The statements that run in the body of the ``for`` / ``while`` ``loop``, in order."""
        return self._statements[1].get(loop, [])

    @cached_property
    def statement_calls(self) -> list[tuple[cst.Call, StatementFact]]:
        """Every call a statement makes (not counting nested defs and lambdas), statement by statement."""
        return [(call, fact) for fact in self._facts.statements() for call in calls_in(fact.node)]

    @cached_property
    def model_calls_by_statement(self) -> dict[cst.CSTNode, list[cst.Call]]:
        """The model forward calls of each statement (by its small-statement node)."""
        found: dict[cst.CSTNode, list[cst.Call]] = {}
        for call in self._facts.model_calls():
            if call.statement is not None:
                found.setdefault(call.statement.node, []).append(call.node)
        return found

    @cached_property
    def backward_consumed(self) -> frozenset[str]:
        """Every name whose graph flows into a backward call somewhere in the file."""
        facts = self._facts
        names: set[str] = set(facts.summary(facts.structure.top).backward_consumed)
        for info in facts.structure.functions.values():
            names |= facts.summary(info).backward_consumed
        return frozenset(names)

    # --- bindings -------------------------------------------------------------------------------
    @cached_property
    def _bindings(self) -> dict[tuple[object, str], list[cst.BaseExpression]]:
        bindings: dict[tuple[object, str], list[cst.BaseExpression]] = {}
        for statement in self._facts.statements():
            node = statement.node
            if isinstance(node, cst.Assign):
                targets = [t.target for t in node.targets]
                value = node.value
            elif isinstance(node, cst.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            for target in targets:
                for name in bound_names(target):
                    bindings.setdefault((_binding_scope(statement.function, name), name), []).append(value)
        return bindings

    def assigned_values(self, function: FunctionInfo, name: str) -> list[cst.BaseExpression]:
        """What ``name`` is assigned in ``function`` (``self.x``: in any method of its class, or,
        when the class assigns none, of the nearest base class of the file that does), in order;
        each target of an unpacking gets the whole value."""
        scope = _binding_scope(function, name)
        found = self._bindings.get((scope, name), [])
        if not found and isinstance(scope, ClassInfo):
            for base in scope.local_bases:
                found = self._class_bindings(base, name, depth=1)
                if found:
                    break
        return found

    def _class_bindings(self, cls: ClassInfo, name: str, depth: int) -> list[cst.BaseExpression]:
        found = self._bindings.get((cls, name), [])
        if found or depth > 8:
            return found
        for base in cls.local_bases:
            found = self._class_bindings(base, name, depth + 1)
            if found:
                return found
        return []

    def visible_values(self, function: FunctionInfo, name: str) -> list[cst.BaseExpression]:
        """:meth:`assigned_values`, else what the module level assigns to a plain ``name``."""
        found = self.assigned_values(function, name)
        if not found and "." not in name:
            found = self.module_values(name)
        return found

    def module_values(self, name: str) -> list[cst.BaseExpression]:
        """What the module's top-level code assigns to ``name``."""
        return self.assigned_values(self._facts.structure.top, name)

    # --- the syntax view ------------------------------------------------------------------------
    @cached_property
    def _places(self) -> _Places:
        places = _Places()
        indexed = _PLACE_TYPES

        def wanted(node: cst.CSTNode) -> bool:
            return type(node) in indexed  # exact types: isinstance on libcst's ABCs is slow

        for node, path in walk_with_ancestors(self._facts.module, wanted):
            place = Place(node, path)
            if isinstance(node, cst.Call):
                name = callee_name(node.func)
                if name is not None:
                    places.calls.setdefault(name, []).append(place)
                    places.ordered_calls.append(place)
            elif isinstance(node, cst.FunctionDef):
                for decorator in node.decorators:
                    expr = decorator.decorator
                    name = callee_name(expr.func if isinstance(expr, cst.Call) else expr)
                    if name is not None:
                        places.definitions.setdefault(name, []).append(place)
            else:
                places.assignments.append(place)
        return places

    def calls_named(self, *names: str) -> list[Place]:
        """Calls whose callee's last name is one of ``names`` (``torch.cuda.empty_cache()`` for
        ``"empty_cache"``), anywhere in the module."""
        return [place for name in names for place in self._places.calls.get(name, ())]

    def decorated_with(self, name: str) -> list[Place]:
        """``def`` statements with a decorator whose last name is ``name`` (``@tf.function``: ``"function"``)."""
        return list(self._places.definitions.get(name, ()))

    @property
    def assignments(self) -> list[Place]:
        """Every ``Assign`` / ``AnnAssign`` with a value, in source order."""
        return self._places.assignments

    @property
    def ordered_calls(self) -> list[Place]:
        """Every call with a named callee, in source order."""
        return self._places.ordered_calls

    @cached_property
    def _place_by_node(self) -> dict[cst.CSTNode, Place]:
        return {place.node: place for place in (*self._places.assignments, *self._places.ordered_calls)}

    def place_of(self, fact: StatementFact) -> Place | None:
        """Where a simple statement sits (its guards, loops, scope): an assignment, or a
        statement that is a call (``buffer.append(x)``)."""
        node = fact.node
        if isinstance(node, cst.Expr):
            node = node.value
        return self._place_by_node.get(node)


def _binding_scope(function: FunctionInfo, name: str) -> FunctionInfo | ClassInfo:
    """Where an assignment to ``name`` is visible: ``self.x`` in the whole class, a local in its function."""
    if name.startswith("self.") and function.cls is not None:
        return function.cls
    return function
