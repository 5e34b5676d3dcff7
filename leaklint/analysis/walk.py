"""Fast, non-recursive traversal of libcst trees.

libcst's ``CSTVisitor`` rebuilds every node it passes (``_visit_and_replace_children``), which
made visiting cost several times the parse. The analysis only reads trees, so it walks the
dataclass fields directly, skipping the whitespace and punctuation fields that never hold code.
Iterative traversal also means deeply nested generated code cannot exhaust the Python stack.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Callable, Iterator

import libcst as cst

_SKIPPED_FIELDS = frozenset(
    {
        "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators", "header",
        "footer", "dot", "equal", "colon", "newline", "indent", "trailing_whitespace", "whitespace",
        "star", "operator", "lbracket", "rbracket", "lbrace", "rbrace", "asynchronous",
    }
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(node_type)
    if names is None:
        names = tuple(
            f.name
            for f in dataclasses.fields(node_type)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )
        _CHILD_FIELDS[node_type] = names
    return names


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


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Child nodes that can hold code, in source order (do not modify the list)."""
    cache = _children_cache
    if cache is not None:
        entry = cache.get(id(node))
        if entry is not None and entry[0] is node:
            return entry[1]
    found: list[cst.CSTNode] = []
    is_node = _IS_NODE.get
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        value_type = type(value)
        if value_type is list or value_type is tuple:
            found.extend(item for item in value if is_node(type(item)) or _is_node_type(type(item)))
        elif is_node(value_type) or _is_node_type(value_type):
            found.append(value)
    if cache is not None:
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


def dotted_names_in(node: cst.CSTNode) -> set[str]:
    """Every name and dotted attribute chain mentioned in ``node`` (``a``, ``a.b``, ``a.b.c``)."""
    from leaklint.analysis.names import dotted_name

    names: set[str] = set()
    attribute_leaves: set[int] = set()  # `loss` in `outputs.loss` is not the name `loss`
    for current in walk(node):
        if isinstance(current, cst.Attribute):
            attribute_leaves.add(id(current.attr))
            name = dotted_name(current)
            if name:
                names.add(name)
        elif isinstance(current, cst.Name) and id(current) not in attribute_leaves:
            names.add(current.value)
    return names


def names_read(node: cst.CSTNode) -> set[str]:
    """Names and dotted attribute chains an expression reads: ``model``, ``out``, ``self``,
    ``self.hidden`` in ``model(out).loss + self.hidden.sum()`` (every prefix of a chain, but not
    the attribute names ``loss``, ``sum`` on their own, and nothing inside a lambda or a def)."""
    from leaklint.analysis.names import dotted_name

    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.add(current.value)
        elif isinstance(current, cst.Attribute):
            name = dotted_name(current)
            if name is not None:
                parts = name.split(".")
                found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
            else:
                stack.append(current.value)
        elif not isinstance(current, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            stack.extend(children(current))
    return found


def calls_in(node: cst.CSTNode) -> list[cst.Call]:
    """Every call under ``node`` in source order, not counting nested functions, lambdas and classes."""
    return [child for child in walk(node, into=not_into_scopes) if isinstance(child, cst.Call)]


def mentions(node: cst.CSTNode, name: str) -> bool:
    """Whether the dotted ``name`` appears anywhere in ``node``."""
    return name in dotted_names_in(node)


class Walker:
    """A read-only visitor on the fast traversal: define ``visit_<Node>`` / ``leave_<Node>``.

    ``visit_*`` returning False skips the node's children (``leave_*`` still runs).
    """

    def run(self, node: cst.CSTNode) -> None:
        stack: list[tuple[cst.CSTNode, bool]] = [(node, False)]
        handlers: dict[type, tuple[Callable | None, Callable | None]] = {}  # looked up once per type
        while stack:
            current, leaving = stack.pop()
            node_type = type(current)
            found = handlers.get(node_type)
            if found is None:
                name = node_type.__name__
                found = handlers[node_type] = (getattr(self, "visit_" + name, None), getattr(self, "leave_" + name, None))
            visit, leave = found
            if leaving:
                if leave is not None:
                    leave(current)
                continue
            descend = visit(current) if visit is not None else None
            if leave is not None:
                stack.append((current, True))
            if descend is not False:
                stack.extend((child, False) for child in reversed(children(current)))
