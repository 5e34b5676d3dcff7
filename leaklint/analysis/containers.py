"""Containers as the code builds them, and those that outlive a call.

* The slot a store writes into (``self.stats[key]``), the literal keys of a dict, and queues that
  keep only their last items (``deque(maxlen=20)``): what the provenance pass asks.
* Where a statement adds to a list, dict or set kept on ``self`` or at module level, and whether
  anything in the file ever takes elements out of it again. A container that only grows
  (``self.cache[key] = value``, ``RESULTS.append(obj)``) holds every value ever added for the life
  of its owner; one that something pops, clears, deletes from or rebinds is managed. LL305 and
  LL306 ask these questions; each rule decides what added value matters.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import libcst as cst

from leaklint.analysis import percall_api, torch_api
from leaklint.analysis.names import ImportMap, dotted_name
from leaklint.analysis.structure import ClassInfo, bound_names
from leaklint.analysis.syntax import call_argument
from leaklint.analysis.walk import not_into_scopes, walk

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.provenance import StatementFact


#: ImportMap -> ClassDef -> its attributes that only ever hold a bounded queue (see
#: ``bounded_attributes``); one table per module (its ImportMap), like provenance's ``_SHARED_NAMES``.
_BOUNDED: weakref.WeakKeyDictionary[ImportMap, dict[cst.ClassDef, frozenset[str]]] = weakref.WeakKeyDictionary()


def _bounded_attributes_of(cls: cst.ClassDef, imports: ImportMap) -> frozenset[str]:
    assigned: dict[str, bool] = {}
    for node in walk(cls):
        if type(node) is not cst.Assign:
            continue
        for target in node.targets:  # type: ignore[attr-defined]
            name = dotted_name(target.target)
            if name is None or not name.startswith("self."):
                continue
            assigned[name] = assigned.get(name, True) and is_bounded_queue(node.value, imports)  # type: ignore[attr-defined]
    return frozenset(name for name, bounded in assigned.items() if bounded)


#: A queue bounded to more items than this is no window of recent items: ``deque(maxlen=200_000)``
#: fills over a whole run, and everything its items hold stays alive until then.
LONGEST_WINDOW = 1000


def is_bounded_queue(value: cst.BaseExpression, imports: ImportMap) -> bool:
    """``deque(maxlen=20)`` / ``deque([], 20)``: a queue that drops its oldest item when full
    (after at most :data:`LONGEST_WINDOW` items, when its bound is a literal)."""
    if type(value) is not cst.Call or imports.resolve(value.func) not in torch_api.BOUNDED_QUEUES:  # type: ignore[attr-defined]
        return False
    bound = call_argument(value, 1, "maxlen")  # type: ignore[arg-type]
    if bound is None:
        return False
    return not (isinstance(bound, cst.Integer) and int(bound.evaluated_value) > LONGEST_WINDOW)


def container_name(expr: cst.BaseExpression) -> str | None:
    """``self.stats`` in ``self.stats[key]``, ``self.stats[a][b]``, ``self.stats.setdefault(k, [])``:
    the object that holds what is stored in one of its slots."""
    while True:
        if type(expr) is cst.Subscript:
            expr = expr.value  # type: ignore[attr-defined]
        elif type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in ("setdefault", "get"):  # type: ignore[attr-defined]
            expr = expr.func.value  # type: ignore[attr-defined]
        else:
            return dotted_name(expr)


def literal_key(expr: cst.BaseExpression) -> object | None:
    """The key a literal subscript or dict key names (``"loss"``, ``0``), None for anything else."""
    if type(expr) is cst.SimpleString:
        return expr.evaluated_value  # type: ignore[attr-defined]
    if type(expr) is cst.Integer:
        return int(expr.value.replace("_", ""), 0)  # type: ignore[attr-defined]
    return None


def bounded_attributes(cls: cst.ClassDef, imports: ImportMap) -> frozenset[str]:
    """Attributes of ``cls`` that only ever hold a bounded queue (``self.window = deque(maxlen=20)``):
    appending to them keeps the last few items (computed once per class and module)."""
    cache = _BOUNDED.get(imports)
    if cache is None:
        cache = _BOUNDED[imports] = {}
    found = cache.get(cls)
    if found is None:
        found = cache[cls] = _bounded_attributes_of(cls, imports)
    return found


# --- containers that outlive a call (LL305, LL306) ---------------------------------------------
@dataclass(frozen=True)
class Store:
    """A statement that adds to a named container."""

    statement: StatementFact
    #: The container's dotted name: ``self.cache``, ``RESULTS``.
    container: str
    #: What goes in (each argument of ``append``/``extend``..., or the assigned value).
    added: tuple[cst.BaseExpression, ...]
    #: The key of ``container[key] = value`` (None for the methods).
    key: cst.BaseExpression | None
    #: ``append``, ``extend``..., or ``[]=`` for an item assignment.
    how: str

    @property
    def owner(self) -> ClassInfo | None:
        return self.statement.function.cls if self.container.startswith("self.") else None


def stores(facts: ModuleFacts) -> list[Store]:
    """Every statement that adds to a container named by ``self.x`` or a plain name. Built once per file."""
    return facts.derived(_stores)


def _stores(facts: ModuleFacts) -> list[Store]:
    found = []
    for fact in facts.statements():
        for store in _stores_of(fact):
            found.append(store)
    return found


def _stores_of(fact: StatementFact) -> Iterator[Store]:
    node = fact.node
    if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
        call = node.value
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in percall_api.ADDING_METHODS:
            container = dotted_name(func.value)
            if container is None:
                return
            added: list[cst.BaseExpression] = []
            for position, arg in enumerate(call.args):
                if func.attr.value in ("insert", "setdefault") and position == 0:
                    continue  # the index / the key
                added.append(arg.value)
            yield Store(fact, container, tuple(added), None, func.attr.value)
    elif isinstance(node, cst.Assign):
        for target in node.targets:
            if isinstance(target.target, cst.Subscript):
                container = dotted_name(target.target.value)
                slice_ = target.target.slice
                if container is None or len(slice_) != 1 or not isinstance(slice_[0].slice, cst.Index):
                    continue
                yield Store(fact, container, (node.value,), slice_[0].slice.value, "[]=")
    elif isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign):
        container = dotted_name(node.target)
        if container is not None and isinstance(node.value, (cst.List, cst.Tuple)):
            yield Store(fact, container, tuple(e.value for e in node.value.elements), None, "+=")


def outlives_call(store: Store, facts: ModuleFacts) -> bool:
    """The container lives longer than the call that adds to it: an attribute of ``self`` (outside
    ``__init__``) or a module-level name the function does not bind itself."""
    fact = store.statement
    function = fact.function
    if function.is_module_level:
        return False
    if store.container.startswith("self."):
        return function.cls is not None and function.name != "__init__" and function.parent is None
    if "." in store.container:
        return False
    return facts.lifetime(fact, store.container).outlives_call and store.container in _module_names(facts)


def _module_names(facts: ModuleFacts) -> set[str]:
    return facts.derived(_module_level_names)


def _module_level_names(facts: ModuleFacts) -> set[str]:
    names = set()
    for fact in facts.statements():
        if fact.function.is_module_level and isinstance(fact.node, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in fact.node.targets] if isinstance(fact.node, cst.Assign) else [fact.node.target]
            names.update(name for target in targets if (name := dotted_name(target)) and "." not in name)
    return names


def managed(container: str, owner: ClassInfo | None, facts: ModuleFacts) -> bool:
    """Something in the file takes elements out of the container or empties it: ``pop``,
    ``clear``, ``del c[k]``, ``c[:] = ...``, or binds the name again after it was made (outside
    ``__init__`` for an attribute, inside a function or a loop for a module-level name)."""
    return (owner, container) in facts.derived(_managed_containers)


def _managed_containers(facts: ModuleFacts) -> set[tuple[ClassInfo | None, str]]:
    found: set[tuple[ClassInfo | None, str]] = set()
    for fact in facts.statements():
        function = fact.function

        def owner_of(name: str) -> ClassInfo | None:
            return function.cls if name.startswith("self.") else None

        node = fact.node
        for call in walk(node, into=not_into_scopes):
            if (
                isinstance(call, cst.Call)
                and isinstance(call.func, cst.Attribute)
                and call.func.attr.value in percall_api.REMOVING_METHODS
            ):
                name = dotted_name(call.func.value)
                if name is not None:
                    found.add((owner_of(name), name))
        if isinstance(node, cst.Del):
            for target in _del_targets(node.target):
                base = target.value if isinstance(target, cst.Subscript) else target
                name = dotted_name(base)
                if name is not None:
                    found.add((owner_of(name), name))
        elif isinstance(node, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for target in targets:
                if isinstance(target, cst.Subscript) and _is_slice(target):
                    name = dotted_name(target.value)
                    if name is not None:
                        found.add((owner_of(name), name))
                    continue
                for name in bound_names(target):
                    if node.value is not None and is_bounded_queue(node.value, facts.imports):
                        found.add((owner_of(name), name))  # deque(maxlen=N): drops the oldest itself
                    elif name.startswith("self.") and function.name != "__init__":
                        found.add((function.cls, name))
                    elif "." not in name and (fact.loops or not function.is_module_level) and _rebinds_global(name, fact, facts):
                        found.add((None, name))
    return found


def _del_targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [element.value for element in target.elements]
    return [target]


def _is_slice(target: cst.Subscript) -> bool:
    return any(isinstance(element.slice, cst.Slice) for element in target.slice)


def _rebinds_global(name: str, fact: StatementFact, facts: ModuleFacts) -> bool:
    """``results = []`` at module level inside a loop, or in a function that declares it global."""
    if fact.function.is_module_level:
        return True
    return name in facts.derived(_declared_global).get(fact.function.node, ())


def _declared_global(facts: ModuleFacts) -> dict[cst.CSTNode, frozenset[str]]:
    """Each function's ``global`` names (one walk per function, once per file)."""
    found: dict[cst.CSTNode, frozenset[str]] = {}
    for info in facts.structure.functions.values():
        node = info.node
        if node is None:
            continue
        found[node] = frozenset(
            item.name.value
            for statement in walk(node.body, into=not_into_scopes)
            if isinstance(statement, cst.Global)
            for item in statement.names
        )
    return found
