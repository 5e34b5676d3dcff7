"""What every class of :mod:`leaklint.analysis.mirror` shares: the hand-written part of the mirror.

``import libcst`` costs about 0.17 s, most of it spent creating some 250 frozen dataclasses, and
a one-file lint pays it whenever the file passes the gate. The mirror is a copy of libcst's node
classes (same names, same fields in the same order, same defaults, same base classes) written
out as plain ``__slots__`` classes, so importing it costs a few milliseconds. The screen and the
analysis run on mirror trees; libcst is imported only to parse a file that a rule fires in, and
that tree is converted (:mod:`leaklint.analysis.convert`), every node keeping its libcst
``origin`` for positions and code generation.

A mirror node, like a libcst node, is immutable by convention, equal only to itself, and hashed
by identity; ``deep_equals`` and ``with_changes`` behave as libcst's do.
"""

from __future__ import annotations

from ast import literal_eval
from enum import Enum, auto
from typing import Any, ClassVar, Sequence


class MaybeSentinel(Enum):
    """libcst's marker for "let code generation decide" (a comma, a semicolon...)."""

    DEFAULT = auto()

    def __repr__(self) -> str:
        return "MaybeSentinel.DEFAULT"


class CSTNode:
    """The root of the mirror's classes. ``origin`` is the libcst node a converted node was made
    from; nodes built from ``ast`` or by a rule have none (``getattr(node, "origin", None)``)."""

    __slots__ = ("origin",)
    #: The libcst dataclass fields, in their order.
    _fields: ClassVar[tuple[str, ...]] = ()

    def with_changes(self, **changes: Any) -> Any:
        """A copy with ``changes`` applied (and no ``origin``: it is no longer libcst's node)."""
        values = {name: getattr(self, name) for name in self._fields}
        values.update(changes)
        return type(self)(**values)

    def deep_equals(self, other: object) -> bool:
        """Equal in every field, recursively, as libcst's ``deep_equals`` compares."""
        return deep_equals(self, other)

    def __repr__(self) -> str:
        inside = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({inside})"


def deep_equals(first: object, second: object) -> bool:
    """libcst's ``deep_equals`` for mirror nodes: node types and every field alike; sequences
    compared item by item whatever their type (a list equals a tuple)."""
    if isinstance(first, CSTNode) and isinstance(second, CSTNode):
        if type(first) is not type(second):
            return False
        return first is second or all(deep_equals(getattr(first, name), getattr(second, name)) for name in first._fields)
    if _is_sequence(first) and _is_sequence(second):
        return first is second or (len(first) == len(second) and all(deep_equals(a, b) for a, b in zip(first, second)))  # type: ignore[arg-type]
    return first == second


def _is_sequence(value: object) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


class LiteralValue:
    """``evaluated_value`` of a number or a simple string: its text, evaluated."""

    __slots__ = ()
    value: str

    @property
    def evaluated_value(self) -> Any:
        return literal_eval(self.value)


class ConcatenatedValue:
    """``evaluated_value`` of ``"a" "b"``: both halves joined, None when one is an f-string or
    the halves mix ``str`` and ``bytes`` (libcst's definition)."""

    __slots__ = ()
    left: Any
    right: Any

    @property
    def evaluated_value(self) -> str | bytes | None:
        left, right = self.left, self.right
        if type(left).__name__ == "FormattedString" or type(right).__name__ == "FormattedString":
            return None
        left_value, right_value = left.evaluated_value, right.evaluated_value
        if right_value is None:
            return None
        if isinstance(left_value, bytes) and isinstance(right_value, bytes):
            return left_value + right_value
        if isinstance(left_value, str) and isinstance(right_value, str):
            return left_value + right_value
        return None


class ModuleMethods:
    """``Module.code_for_node``: libcst's code generation, on the libcst form of the node; for
    the screen's tree (built from ``ast``: no ``origin``), a sketch that needs no libcst."""

    __slots__ = ()
    default_indent: str
    default_newline: str

    def code_for_node(self, node: CSTNode) -> str:
        if getattr(self, "origin", None) is None:
            return sketch(node)
        from leaklint.analysis.convert import code_for_node

        return code_for_node(self, node)


#: Classes whose text is layout, left out of a sketch.
_LAYOUT = frozenset({"SimpleWhitespace", "ParenthesizedWhitespace", "TrailingWhitespace", "Newline", "EmptyLine", "Comment"})


def sketch(node: CSTNode) -> str:
    """The words of ``node`` (names, literals, keywords of the fields that hold text) separated by
    spaces: ``x.add_(y)`` is ``x add_ y``. What the screen's rules get for source text, which
    only ever goes into messages and fixes the screen throws away: the screen decides whether a
    rule fires, never what it says (``tests/test_mirror.py`` checks that rules decide the same
    with libcst's code generation)."""
    words: list[str] = []
    stack: list[object] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, CSTNode):
            if type(current).__name__ in _LAYOUT:
                continue
            stack.extend(reversed([getattr(current, name) for name in current._fields]))
        elif isinstance(current, (list, tuple)):
            stack.extend(reversed(current))
        elif isinstance(current, str) and current.strip():
            words.append(current)
    return " ".join(words)


#: Extra bases of mirror classes whose libcst counterparts have properties the analysis reads.
MIXINS: dict[str, tuple[type, ...]] = {
    "Integer": (LiteralValue,),
    "Float": (LiteralValue,),
    "Imaginary": (LiteralValue,),
    "SimpleString": (LiteralValue,),
    "ConcatenatedString": (ConcatenatedValue,),
    "Module": (ModuleMethods,),
}
