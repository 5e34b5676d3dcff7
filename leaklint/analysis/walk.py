"""Fast, non-recursive traversal of libcst trees.

libcst's ``CSTVisitor`` rebuilds every node it passes (``_visit_and_replace_children``), which
made visiting cost several times the parse. The analysis only reads trees, so it walks the
dataclass fields directly, skipping the whitespace and punctuation fields that never hold code.
Iterative traversal also means deeply nested generated code cannot exhaust the Python stack.
"""

from __future__ import annotations

import collections.abc
import contextlib
import dataclasses
import operator
import typing
from typing import Callable, Iterator

import libcst as cst

_SKIPPED_FIELDS = frozenset(
    {
        "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators", "header",
        "footer", "dot", "equal", "colon", "newline", "indent", "trailing_whitespace", "whitespace",
        "star", "operator", "lbracket", "rbracket", "lbrace", "rbrace", "asynchronous",
    }
)
#: How :func:`children` reads a field, by what its annotation allows it to hold.
_LOOK = 0  # anything (``Union[Param, MaybeSentinel]``, ``Union[Sequence[...], ImportStar]``): look at the value
_NODES = 1  # a sequence of nodes: take them all
_NODE = 2  # a node, or None
#: node type -> (field, how to read it) for the fields that can hold code.
_CHILD_FIELDS: dict[type, tuple[tuple[str, int], ...]] = {}


def _child_fields(node_type: type) -> tuple[tuple[str, int], ...]:
    """The fields of ``node_type`` that can hold code, and how to read each: none for leaves
    such as ``Name``, whose only field is a string, so that :func:`children` answers for them
    without a look."""
    fields = _CHILD_FIELDS.get(node_type)
    if fields is None:
        try:
            hints = typing.get_type_hints(node_type)
        except Exception:  # an annotation we cannot resolve: look at every field's value
            hints = {}
        fields = tuple(
            (f.name, _how_to_read(hints.get(f.name, object)))
            for f in dataclasses.fields(node_type)
            if f.name not in _SKIPPED_FIELDS
            and not f.name.startswith("whitespace")
            and _can_hold_node(hints.get(f.name, object))
        )
        _CHILD_FIELDS[node_type] = fields
    return fields


def _can_hold_node(annotation: object) -> bool:
    """Whether a field annotated ``annotation`` may hold a node: ``str``, ``bool``,
    ``Optional[str]`` and ``Literal[...]`` fields cannot; anything else might."""
    if isinstance(annotation, type):
        return not issubclass(annotation, (str, bool, int))
    if typing.get_origin(annotation) is typing.Literal:
        return False
    arguments = typing.get_args(annotation)
    if not arguments:
        return True
    return any(_can_hold_node(a) for a in arguments if a is not type(None))


def _only_nodes(annotation: object, *, none: bool) -> bool:
    """Whether ``annotation`` names node classes only (and None, where ``none``)."""
    if annotation is type(None):
        return none
    if isinstance(annotation, type):
        return issubclass(annotation, cst.CSTNode)
    if typing.get_origin(annotation) is typing.Union:
        return all(_only_nodes(a, none=none) for a in typing.get_args(annotation))
    return False


def _how_to_read(annotation: object) -> int:
    """Whether :func:`children` may take a field's value as it is (a sequence of nodes; a node or
    None: most fields) or must look at it; by the annotation, the cost of a look at every value."""
    if typing.get_origin(annotation) is collections.abc.Sequence:
        (item,) = typing.get_args(annotation)
        return _NODES if _only_nodes(item, none=False) else _LOOK
    return _NODE if _only_nodes(annotation, none=True) else _LOOK


#: type -> whether it is a CSTNode. ``isinstance(x, cst.CSTNode)`` goes through ABC machinery
#: (CSTNode is an ABC) and was a tenth of the analysis time; a dict lookup by type is not.
_IS_NODE: dict[type, bool] = {}


def _is_node_type(value_type: type) -> bool:
    known = _IS_NODE.get(value_type)
    if known is None:
        known = _IS_NODE[value_type] = issubclass(value_type, cst.CSTNode)
    return known


#: While :func:`children_cached` is active: id(node) -> (node, its children). The node is kept in
#: the entry so that its id cannot be reused by another node while the entry exists.
_children_cache: dict[int, tuple[cst.CSTNode, list[cst.CSTNode]]] | None = None


@contextlib.contextmanager
def children_cached() -> Iterator[None]:
    """Remember every node's children while the block runs: the analysis walks the same tree
    several times (imports, structure, provenance, rules), and listing children is most of a walk."""
    global _children_cache
    outer = _children_cache
    if outer is None:
        _children_cache = {}
    try:
        yield
    finally:
        _children_cache = outer


#: What :func:`children` answers for a leaf (shared: callers never modify the list).
_NO_CHILDREN: list[cst.CSTNode] = []
#: node type -> the function that lists its children (:func:`_lister`), None for a leaf.
_LISTERS: dict[type, Callable[[cst.CSTNode], list[cst.CSTNode]] | None] = {}


def _look(value: object, found: list[cst.CSTNode]) -> None:
    """Add ``value`` to ``found`` if it is a node, or the nodes in it if it is a sequence: for
    fields whose annotation also allows other values (``MaybeSentinel``, ``ImportStar``)."""
    is_node = _IS_NODE.get
    value_type = type(value)
    if value_type is list or value_type is tuple:
        found.extend(item for item in value if is_node(type(item)) or _is_node_type(type(item)))  # type: ignore[attr-defined]
    elif is_node(value_type) or _is_node_type(value_type):
        found.append(value)  # type: ignore[arg-type]


def _lister(node_type: type) -> Callable[[cst.CSTNode], list[cst.CSTNode]] | None:
    """A function that lists a node's children field by field, as :func:`_child_fields` says to
    read each; None for a leaf."""
    fields = tuple((operator.attrgetter(name), how) for name, how in _child_fields(node_type))
    if not fields:
        return None

    def list_children(node: cst.CSTNode) -> list[cst.CSTNode]:
        found: list[cst.CSTNode] = []
        for read, how in fields:
            value = read(node)
            if how == _NODES:
                found.extend(value)
            elif how == _NODE:
                if value is not None:
                    found.append(value)
            else:
                _look(value, found)
        return found

    return list_children


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Child nodes that can hold code, in source order (do not modify the list)."""
    node_type = type(node)
    try:
        lister = _LISTERS[node_type]
    except KeyError:
        lister = _LISTERS[node_type] = _lister(node_type)
    if lister is None:  # a leaf (two nodes in five): nothing to list or remember
        return _NO_CHILDREN
    cache = _children_cache
    if cache is None:
        return lister(node)
    entry = cache.get(id(node))
    if entry is not None and entry[0] is node:
        return entry[1]
    found = lister(node)
    cache[id(node)] = (node, found)
    return found


def walk(node: cst.CSTNode, *, into: Callable[[cst.CSTNode], bool] | None = None) -> Iterator[cst.CSTNode]:
    """Every node under ``node`` (itself included), pre-order. ``into(n)`` False prunes ``n``'s children."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if into is None or into(current):
            stack.extend(reversed(children(current)))


_SCOPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef})


def not_into_scopes(node: cst.CSTNode) -> bool:
    """Prune nested functions, lambdas and classes: their bodies run elsewhere, later."""
    return type(node) not in _SCOPES


def calls_in(node: cst.CSTNode) -> list[cst.Call]:
    """Every call under ``node`` in source order, not counting nested functions, lambdas and classes."""
    return [child for child in walk(node, into=not_into_scopes) if type(child) is cst.Call]  # exact: see names_read


#: A walker's handlers for one node type: visit_*, leave_* (None where not defined), and whether
#: the type can have children at all.
_Handlers = typing.Tuple[typing.Optional[Callable], typing.Optional[Callable], bool]


class Walker:
    """A read-only visitor on the fast traversal: define ``visit_<Node>`` / ``leave_<Node>``.

    ``visit_*`` returning False skips the node's children (``leave_*`` still runs). Handlers are
    looked up on the class (once per class and node type, not per run: some walkers run once per
    statement), so they must be plain methods defined on the class.
    """

    #: Per Walker subclass: node type -> its handlers.
    _handler_cache: dict[type, dict[type, _Handlers]] = {}

    @classmethod
    def _handler_table(cls) -> dict[type, _Handlers]:
        return Walker._handler_cache.setdefault(cls, {})

    @classmethod
    def _handlers_for(cls, node_type: type) -> _Handlers:
        table = cls._handler_table()
        found = table.get(node_type)
        if found is None:
            name = node_type.__name__
            found = table[node_type] = (
                getattr(cls, "visit_" + name, None),
                getattr(cls, "leave_" + name, None),
                bool(_child_fields(node_type)),
            )
        return found

    def run(self, node: cst.CSTNode) -> None:
        # The stack holds nodes to visit and (leave_*, node) pairs still to leave: a node is never
        # a tuple, and pushing children as they are (no wrapper per child) is most of the speed.
        table = self._handler_table()
        handlers_for = self._handlers_for
        stack: list = [node]
        pop, push, extend = stack.pop, stack.append, stack.extend
        while stack:
            current = pop()
            node_type = type(current)
            if node_type is tuple:
                leave, left = current
                leave(self, left)
                continue
            visit, leave, has_fields = table.get(node_type) or handlers_for(node_type)
            if leave is not None:
                push((leave, current))
            if (visit is None or visit(self, current) is not False) and has_fields:
                extend(reversed(children(current)))


#: (``now``'s class, ``later``'s class) -> node type -> now's handlers and later's visit_*, leave_*:
#: one look-up per node for both walkers.
_PAIR_TABLES: dict[tuple[type, type], dict[type, tuple]] = {}


def run_now_and_later(now: Walker, later: Walker, node: cst.CSTNode) -> Callable[[], None]:
    """One walk of ``node`` for two walkers: ``now``'s handlers run during it; ``later``'s are
    recorded, and the function returned runs them, in the order ``later.run(node)`` would have.

    For a walker that must wait for what another learns from the whole tree (the structure scan
    resolves names with the import map, which is settled only once every import and binding in
    the module has been seen): the tree is traversed once instead of twice, and the replay only
    calls the handlers ``later`` defines. ``now`` may prune (``later`` still sees the subtree);
    ``later``'s visits run after the walk, too late to prune, so a ``later`` that returns False
    from a ``visit_*`` is an error.
    """
    calls: list[tuple[Callable, cst.CSTNode]] = []  # later's handlers and their nodes, in walk order
    record = calls.append
    table = _PAIR_TABLES.setdefault((type(now), type(later)), {})
    stack: list = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        current = pop()
        node_type = type(current)
        if node_type is tuple:
            leave_now, leave_later, left = current
            if leave_now is not None:
                leave_now(now, left)
            if leave_later is not None:
                record((leave_later, left))
            continue
        found = table.get(node_type)
        if found is None:
            found = table[node_type] = now._handlers_for(node_type) + later._handlers_for(node_type)[:2]
        visit_now, leave_now, has_fields, visit_later, leave_later = found
        if leave_now is not None or leave_later is not None:
            push((leave_now, leave_later, current))
        if visit_later is not None:
            record((visit_later, current))
        if visit_now is not None and visit_now(now, current) is False:
            # Pruned for `now` only: `later` walks the subtree, which comes next in walk order.
            for child in children(current):
                _record_walk(later, child, record)
        elif has_fields:
            extend(reversed(children(current)))

    def replay() -> None:
        for handler, target in calls:
            if handler(later, target) is False:
                raise TypeError(f"{type(later).__name__} cannot prune: its handlers run after the walk")

    return replay


def _record_walk(walker: Walker, node: cst.CSTNode, record: Callable[[tuple[Callable, cst.CSTNode]], None]) -> None:
    """Record, in walk order, the handler calls ``walker.run(node)`` would make (none pruned)."""
    stack: list = [node]
    while stack:
        current = stack.pop()
        if type(current) is tuple:
            record(current)
            continue
        visit, leave, has_fields = walker._handlers_for(type(current))
        if leave is not None:
            stack.append((leave, current))
        if visit is not None:
            record((visit, current))
        if has_fields:
            stack.extend(reversed(children(current)))
