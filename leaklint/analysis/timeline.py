"""What one function's code does to each of its plain names, in the order it is written: reads,
new values, ``del``, method calls, the loops and calls between them, and which of those can run
after a given statement.

LL309 asks it whether anything still refers to a model after a ``del``: a name that is never read
again but stays bound, a list that still holds it, an object given it before. Source order is the
order the code runs in, except for branches (an ``else`` never runs after its ``if`` body), early
exits (a ``return`` before a loop) and nested functions (they run whenever they are called): those
are asked for explicitly (:meth:`Timeline.reachable`, ``Event.nested``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from leaklint.analysis.syntax import assignment_pairs
from leaklint.analysis.walk import children, walk

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.structure import FunctionInfo

#: Calls that show the author means to give memory back (``gc.collect()``, ``torch.cuda.empty_cache()``).
FREEING_CALLS = frozenset({"collect", "empty_cache", "free_memory", "release_memory", "flush"})
#: Methods that take items out of a list or dict: a holder emptied this way holds nothing any more.
EMPTYING_METHODS = frozenset({"clear", "pop", "popitem", "remove", "__delitem__"})
_BLOCKS = (cst.IndentedBlock, cst.Module, cst.SimpleStatementSuite)
_KEEPING_PLACES = frozenset(
    {cst.Element, cst.DictElement, cst.StarredElement, cst.StarredDictElement, cst.Assign, cst.AnnAssign, cst.NamedExpr, cst.Return, cst.Yield, cst.Param}
)


@dataclass(frozen=True, eq=False)
class Event:
    """One thing the code does, where it is written. ``kind``:

    - ``load``: ``name`` read whole (``argument_of``: the call it is handed to directly);
    - ``store``: ``name`` gets a new value (``value``: what is assigned, when known);
    - ``del``: ``name`` deleted (one event without a name marks the statement itself);
    - ``method``: ``name.attribute(...)`` called (``name(...)``: the ``__call__`` method,
      ``name[...]`` the ``__getitem__`` one, ``del name[...]`` the ``__delitem__`` one);
      ``member``: ``name.attribute`` read otherwise;
    - ``call``: a call (``name``: the callee when it is a plain name; ``targets``: the names its
      result is assigned to); ``loop``: a ``for`` / ``while`` statement."""

    kind: str
    name: str
    node: cst.CSTNode
    #: Inside a nested def, lambda or class: it runs at some later time, not where it is written.
    nested: bool = False
    value: cst.BaseExpression | None = None
    attribute: str = ""
    #: Inside an ``if`` or an ``except`` handler: it may not run.
    guarded: bool = False
    argument_of: cst.Call | None = None
    targets: tuple[str, ...] = ()


class Timeline:
    """The events of one function (or of the module's top level), in source order."""

    def __init__(self, facts: ModuleFacts, function: FunctionInfo) -> None:
        self.events: list[Event] = []
        #: Names the function declares ``global`` or ``nonlocal``: they outlive it.
        self.outer_names: set[str] = set()
        self._guards = 0
        self._parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self._root = function.node.body if function.node is not None else facts.module
        self._index_parents(self._root)
        self._visit(self._root, nested=False)
        self._positions = {id(event): index for index, event in enumerate(self.events)}

    # --- questions ------------------------------------------------------------------------------
    def index(self, event: Event) -> int:
        return self._positions[id(event)]

    def statement_event(self, node: cst.CSTNode) -> Event | None:
        """The event that marks the ``del`` statement ``node``."""
        return next((e for e in self.events if e.node is node and e.kind == "del" and not e.name), None)

    def first_after(self, index: int, name: str) -> Event | None:
        """The first thing done to ``name`` after event ``index`` at this level (not in a nested def)."""
        for event in self.events[index + 1 :]:
            if event.name == name and not event.nested and event.kind in ("load", "store", "del", "member", "method"):
                return event
        return None

    def read_by_closure(self, name: str) -> bool:
        """A nested def or lambda reads ``name``: it may run at any time."""
        return any(event.nested and event.name == name and event.kind in ("load", "member", "method") for event in self.events)

    def between(self, start: int, end: int) -> list[Event]:
        """The events after ``start`` and before ``end`` at this level."""
        return [event for event in self.events[start + 1 : end] if not event.nested]

    def last_store_before(self, index: int, name: str) -> Event | None:
        """The assignment or ``del`` of ``name`` last written before event ``index``."""
        for event in reversed(self.events[:index]):
            if event.name == name and not event.nested and event.kind in ("store", "del"):
                return event
        return None

    def read_after(self, index: int, name: str) -> bool:
        """``name`` is read (whole, a member or a method) after event ``index``, or by a nested def."""
        return self.read_by_closure(name) or any(
            event.name == name and event.kind in ("load", "member", "method") for event in self.between(index, len(self.events))
        )

    def reachable(self, start: cst.CSTNode, target: cst.CSTNode) -> bool:
        """``target`` can run after the statement holding ``start`` (which no loop holds): it is in
        a later statement of the same block or of an enclosing one, with no ``return`` / ``raise``
        in between and not in another branch of an ``if`` that holds ``start``."""
        node = start
        while node in self._parents and not isinstance(self._parents[node], _BLOCKS):
            node = self._parents[node]
        while node in self._parents:
            block = self._parents[node]
            body = list(block.body)  # type: ignore[attr-defined]
            for sibling in body[body.index(node) + 1 :]:
                if any(inner is target for inner in walk(sibling)):
                    return True
                if _exits(sibling):
                    return False
            owner = self._parents.get(block)
            if owner is None or isinstance(owner, (cst.FunctionDef, cst.ClassDef)):
                return False
            node = owner
            while node in self._parents and not isinstance(self._parents[node], _BLOCKS):
                node = self._parents[node]
        return False

    def kept_by_its_place(self, event: Event) -> bool:
        """The name read at ``event`` is put where it may outlive the statement: an item of a
        literal (``[h]``, ``{"k": h}``), the value of an assignment (an alias), a return or yield
        value, a parameter's default. Iterating it, testing it, computing with it keep nothing."""
        return type(self._parents.get(event.node)) in _KEEPING_PLACES

    # --- building -------------------------------------------------------------------------------
    def _index_parents(self, root: cst.CSTNode) -> None:
        stack = [root]
        parents = self._parents
        while stack:
            node = stack.pop()
            for child in children(node):
                parents[child] = node
                stack.append(child)

    def _visit(self, node: cst.CSTNode, nested: bool, argument_of: cst.Call | None = None) -> None:
        node_type = type(node)
        if node_type is cst.Name:
            self.events.append(Event("load", node.value, node, nested, argument_of=argument_of))  # type: ignore[attr-defined]
        elif node_type is cst.Attribute:
            if type(node.value) is cst.Name:  # type: ignore[attr-defined]
                self.events.append(Event("member", node.value.value, node, nested, attribute=node.attr.value))  # type: ignore[attr-defined]
            else:
                self._visit(node.value, nested)  # type: ignore[attr-defined]
        elif node_type is cst.Subscript and type(node.value) is cst.Name:  # type: ignore[attr-defined]
            self.events.append(Event("method", node.value.value, node, nested, attribute="__getitem__"))  # type: ignore[attr-defined]
            for element in node.slice:  # type: ignore[attr-defined]
                self._visit(element, nested)
        elif node_type is cst.Call:
            self._call(node, nested)  # type: ignore[arg-type]
        elif node_type in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            for child in children(node):
                if child is not getattr(node, "name", None):
                    self._visit(child, True)
        elif node_type is cst.Param:
            if node.default is not None:  # type: ignore[attr-defined]
                self._visit(node.default, nested)  # type: ignore[attr-defined]
        elif node_type in (cst.Assign, cst.AnnAssign, cst.NamedExpr):
            self._assign(node, nested)
        elif node_type is cst.For:
            self._visit(node.iter, nested)  # type: ignore[attr-defined]
            self._store(node.target, None, nested)  # type: ignore[attr-defined]
            self.events.append(Event("loop", "", node, nested))
            self._visit(node.body, nested)  # type: ignore[attr-defined]
            if node.orelse is not None:  # type: ignore[attr-defined]
                self._visit(node.orelse, nested)  # type: ignore[attr-defined]
        elif node_type is cst.While:
            self.events.append(Event("loop", "", node, nested))
            for child in children(node):
                self._visit(child, nested)
        elif node_type is cst.Del:
            self.events.append(Event("del", "", node, nested))
            for target in del_targets(node):  # type: ignore[arg-type]
                if isinstance(target, cst.Name):
                    self.events.append(Event("del", target.value, node, nested))
                elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                    self.events.append(Event("method", target.value.value, node, nested, attribute="__delitem__"))
                else:
                    self._visit(target, nested)
        elif node_type is cst.WithItem:
            self._visit(node.item, nested)  # type: ignore[attr-defined]
            if node.asname is not None:  # type: ignore[attr-defined]
                self._store(node.asname.name, None, nested)  # type: ignore[attr-defined]
        elif node_type in (cst.Global, cst.Nonlocal):
            self.outer_names.update(item.name.value for item in node.names)  # type: ignore[attr-defined]
        elif node_type in (cst.Import, cst.ImportFrom):
            return
        elif node_type in (cst.If, cst.ExceptHandler, cst.IfExp):
            self._guards += 1
            for child in children(node):
                self._visit(child, nested)
            self._guards -= 1
        else:
            for child in children(node):
                self._visit(child, nested)

    def _call(self, node: cst.Call, nested: bool, targets: tuple[str, ...] = ()) -> None:
        func = node.func
        name = func.value if isinstance(func, cst.Name) else ""
        self.events.append(Event("call", name, node, nested, guarded=self._guards > 0, targets=targets))
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            self.events.append(Event("method", func.value.value, func, nested, attribute=func.attr.value))
        elif isinstance(func, cst.Name):
            self.events.append(Event("method", func.value, func, nested, attribute="__call__"))  # calling it
        else:
            self._visit(func, nested)
        for arg in node.args:
            self._visit(arg.value, nested, argument_of=node if isinstance(arg.value, cst.Name) else None)

    def _assign(self, node: cst.CSTNode, nested: bool) -> None:
        value = node.value  # type: ignore[attr-defined]
        if value is None:
            return
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]  # type: ignore[attr-defined]
        if isinstance(value, cst.Call):
            names = tuple(n for target in targets for n in _plain_names(target))
            self._call(value, nested, targets=names)
        else:
            self._visit(value, nested)
        for target in targets:
            self._store(target, value, nested)

    def _store(self, target: cst.BaseExpression, value: cst.BaseExpression | None, nested: bool) -> None:
        pairs = list(assignment_pairs(target, value)) if value is not None else []
        if not pairs:
            pairs = [(target, None)]  # unknown, or unpacked from a call: ``a, b = load()``
        for part, part_value in pairs:
            if isinstance(part, cst.Name):
                self.events.append(Event("store", part.value, part, nested, value=part_value))
            elif isinstance(part, (cst.Tuple, cst.List)):
                for element in part.elements:
                    self._store(element.value, None, nested)
            elif isinstance(part, cst.StarredElement):
                self._store(part.value, None, nested)
            else:
                self._visit(part, nested)


def timeline(facts: ModuleFacts, function: FunctionInfo) -> Timeline:
    """The function's timeline, built once per file and function."""
    built = facts.derived(_timelines)
    if function not in built:
        built[function] = Timeline(facts, function)
    return built[function]


def _timelines(facts: ModuleFacts) -> dict[FunctionInfo, Timeline]:
    return {}


def del_targets(node: cst.Del) -> list[cst.BaseExpression]:
    """What a ``del`` statement deletes: ``del a, b[0]`` -> ``a``, ``b[0]``."""
    target = node.target
    return [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]


def _plain_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _plain_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return _plain_names(target.value)
    return []


def _exits(statement: cst.CSTNode) -> bool:
    """A statement line that returns or raises: nothing after it in its block runs."""
    if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return any(isinstance(small, (cst.Return, cst.Raise)) for small in statement.body)
    return isinstance(statement, (cst.Return, cst.Raise))
