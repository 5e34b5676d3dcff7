"""Small questions about one piece of syntax that several rules ask: which argument a call
passes, whether a value is spelt literally, what an expression is rooted in, which names a
function declares ``global``.

They read the tree only (no values, no flow), so they answer the same wherever they are asked.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
from leaklint.analysis.names import dotted_name
from leaklint.analysis.walk import walk


def call_argument(call: cst.Call, position: int, keyword: str | None = None) -> cst.BaseExpression | None:
    """The argument passed at ``position`` or as ``keyword=``; None when it is not passed, or
    when a ``*args`` / ``**kwargs`` before it hides where it is."""
    positional = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg.value
            continue
        if positional == position:
            return arg.value
        positional += 1
    return None


def is_literal(node: cst.BaseExpression, *values: str) -> bool:
    """``True`` / ``False`` / ``None`` / ``0`` / ``1`` spelt literally."""
    if isinstance(node, cst.Name):
        return node.value in values
    if isinstance(node, cst.Integer):
        return node.value in values
    return False


def keyword_is_true(call: cst.Call, keyword: str) -> bool:
    """``keyword=True`` is passed literally (``retain_graph=flag`` is a deliberate runtime choice)."""
    return any(
        arg.keyword is not None
        and arg.keyword.value == keyword
        and isinstance(arg.value, cst.Name)
        and arg.value.value == "True"
        for arg in call.args
    )


def root_name(expr: cst.BaseExpression) -> str | None:
    """``features`` in ``features[name]``, ``self`` in ``self.cache["x"]``, ``out`` in ``out.grad_fn``,
    ``handles`` in ``handles.pop()``."""
    while True:
        if isinstance(expr, cst.Name):
            return expr.value
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        else:
            return None


def subscript_base(expr: cst.BaseExpression) -> str | None:
    """The dotted name a subscript chain indexes: ``self.outs`` for ``self.outs[k][0]``."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return dotted_name(expr)


def declared_names(function: cst.FunctionDef) -> tuple[set[str], set[str]]:
    """Names a function declares ``global`` and ``nonlocal`` (not counting nested scopes): its
    assignments to them outlive the call."""
    globals_: set[str] = set()
    nonlocals: set[str] = set()
    for node in walk(function.body, into=_into_statements):
        node_type = type(node)  # exact: libcst's classes are ABCs, isinstance() on them is slow
        if node_type is cst.Global:
            globals_.update(item.name.value for item in node.names)  # type: ignore[attr-defined]
        elif node_type is cst.Nonlocal:
            nonlocals.update(item.name.value for item in node.names)
    return globals_, nonlocals


#: node type -> whether a ``global``/``nonlocal`` statement can be below it (a statement, a block,
#: a handler; never an expression, a nested function or a class).
_HOLDS_STATEMENTS: dict[type, bool] = {}


def _into_statements(node: cst.CSTNode) -> bool:
    """Walk statements and blocks only: declarations are statements, so expressions (most of a
    function's nodes) need no visit."""
    node_type = type(node)
    holds = _HOLDS_STATEMENTS.get(node_type)
    if holds is None:
        holds = _HOLDS_STATEMENTS[node_type] = not issubclass(node_type, cst.BaseExpression) and node_type not in (cst.FunctionDef, cst.ClassDef)
    return holds


def written_words(node: cst.CSTNode) -> list[str]:
    """The identifiers and string literals under ``node``, as written: what its code says, less
    comments and spacing. A rule that looks for a word in code asks this rather than the code
    text, so a comment cannot decide a finding."""
    words: list[str] = []
    for current in walk(node):
        node_type = type(current)  # exact checks: these classes have no subclasses (see walk.names_read)
        if node_type is cst.Name or node_type is cst.SimpleString or node_type is cst.FormattedStringText:
            words.append(current.value)  # type: ignore[attr-defined]
    return words


def assignment_pairs(target: cst.BaseExpression, value: cst.BaseExpression) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(target, value) pairs of an assignment, element by element when both sides are literals
    of the same length (``self.a, self.b = x, y``)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements):
            for element, item in zip(target.elements, value.elements):
                yield from assignment_pairs(element.value, item.value)
        return
    yield target, value
