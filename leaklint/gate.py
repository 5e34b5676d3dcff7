"""The gate: skip the files in which no selected rule can report anything, before libcst parses them.

Each rule declares, in its own module, what a file must contain before it can fire
(:attr:`~leaklint.rule.Rule.needs`, and :attr:`~leaklint.rule.Rule.needs_above_low` for the
evidence its medium- and high-confidence findings rest on). A need is built from three kinds of
facts, combined with ``&`` and ``|``:

- :class:`Words` — case-insensitive substrings of the source text (``Words("keras", "tensorflow")``);
- :class:`Names` — identifiers of the code: names, attribute names, imported modules and names,
  keyword-argument names, function, class and parameter names (``Names("retain_graph")``, or
  ``Names(matching=predicate)``);
- :class:`Syntax` — kinds of statement or expression, as ``ast`` classes (``Syntax(ast.ExceptHandler)``).

The facts come from the text and from the ``ast`` tree that the syntax check has already built,
in one pass that also measures the tree's depth (libcst's parser needs it bounded). A need is a
*necessary* condition: if a rule can report in a file, the file meets the rule's need. The gate
knows nothing of the analysis, so a rule that learns a new pattern only has to keep its need
true; ``bench/gate_check.py`` and the test-suite lint with and without the gate and compare.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from leaklint.findings import Confidence

if TYPE_CHECKING:
    from leaklint.rule import Rule


@dataclass(frozen=True)
class FileContents:
    """What the gate knows about one file."""

    #: The source, lower-cased.
    text: str
    identifiers: frozenset[str]
    syntax: frozenset[type[ast.AST]]
    #: Depth of the syntax tree.
    depth: int


class Need:
    """A condition on a file's contents; ``a & b`` and ``a | b`` combine two."""

    def met_by(self, contents: FileContents) -> bool:
        raise NotImplementedError

    def __and__(self, other: Need) -> Need:
        return _Combined((self, other), every=True)

    def __or__(self, other: Need) -> Need:
        return _Combined((self, other), every=False)


class Words(Need):
    """Any of ``words`` occurs in the source (case-insensitive substring)."""

    def __init__(self, *words: str) -> None:
        self.words = tuple(word.lower() for word in words)

    def met_by(self, contents: FileContents) -> bool:
        text = contents.text
        return any(word in text for word in self.words)

    def __repr__(self) -> str:
        return f"Words{self.words!r}"


class Names(Need):
    """Any of ``names`` is an identifier of the code, or (``matching``) any identifier passes the test."""

    def __init__(self, *names: str, matching: Callable[[str], bool] | None = None) -> None:
        self.names = frozenset(names)
        self.matching = matching

    def met_by(self, contents: FileContents) -> bool:
        if not self.names.isdisjoint(contents.identifiers):
            return True
        return self.matching is not None and any(self.matching(name) for name in contents.identifiers)

    def __repr__(self) -> str:
        test = f", matching={self.matching.__name__}" if self.matching is not None else ""
        return f"Names({', '.join(sorted(self.names))}{test})"


class Syntax(Need):
    """Any of the ``ast`` node ``kinds`` occurs in the code."""

    def __init__(self, *kinds: type[ast.AST]) -> None:
        self.kinds = frozenset(kinds)

    def met_by(self, contents: FileContents) -> bool:
        return not self.kinds.isdisjoint(contents.syntax)

    def __repr__(self) -> str:
        return f"Syntax({', '.join(sorted(kind.__name__ for kind in self.kinds))})"


class _Combined(Need):
    """``a & b`` (every part met) or ``a | b`` (any part met)."""

    def __init__(self, parts: Sequence[Need], *, every: bool) -> None:
        self.parts = tuple(parts)
        self.every = every

    def met_by(self, contents: FileContents) -> bool:
        met = (part.met_by(contents) for part in self.parts)
        return all(met) if self.every else any(met)

    def __repr__(self) -> str:
        return (" & " if self.every else " | ").join(f"({part!r})" for part in self.parts)


class _Nothing(Need):
    def met_by(self, contents: FileContents) -> bool:
        return True

    def __repr__(self) -> str:
        return "NOTHING"


#: The need that every file meets.
NOTHING: Need = _Nothing()
#: Loops and comprehensions.
LOOPS = Syntax(ast.For, ast.AsyncFor, ast.While, ast.comprehension)


def rules_for(contents: FileContents, rules: Iterable[type[Rule]], min_confidence: Confidence) -> list[type[Rule]]:
    """The rules among ``rules`` that could report something in this file at ``min_confidence``."""
    return [rule for rule in rules if may_fire(rule, contents, min_confidence)]


def may_fire(rule: type[Rule], contents: FileContents, min_confidence: Confidence) -> bool:
    if not rule.needs.met_by(contents):
        return False
    evidence = rule.needs_above_low
    return evidence is None or min_confidence is Confidence.LOW or evidence.met_by(contents)


#: Fields that never hold a node the gate reads: contexts, operators, names and other plain values.
_PLAIN_FIELDS = frozenset(
    {"ctx", "op", "id", "attr", "name", "arg", "asname", "module", "level", "kind", "type_comment",
     "conversion", "is_async", "simple", "tag", "kwd_attrs", "rest"}
)
#: node class -> the fields to look into (see _PLAIN_FIELDS); Constant's value is never a node.
_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: ()}


def read_contents(text: str, tree: ast.AST) -> FileContents:
    """The gate's facts about a file: one pass over its ``ast`` tree, level by level (the number
    of levels is the tree's depth)."""
    identifiers: set[str] = set()
    kinds: set[type[ast.AST]] = set()
    add_kind, add_name = kinds.add, identifiers.add
    fields_of = _FIELDS
    level: list = [tree]
    depth = 0
    while level:
        depth += 1
        below: list = []
        extend, append = below.extend, below.append
        for node in level:
            kind = type(node)
            if kind is str or node is None:  # Global.names, a missing dict key or default
                continue
            add_kind(kind)
            if kind is ast.Name:
                add_name(node.id)
                continue
            if kind is ast.Attribute:
                add_name(node.attr)
            elif kind is ast.keyword or kind is ast.arg:
                if node.arg:
                    add_name(node.arg)
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef:
                add_name(node.name)
            elif kind is ast.alias:
                identifiers.update(node.name.split("."))
                if node.asname:
                    add_name(node.asname)
            elif kind is ast.ImportFrom and node.module:
                identifiers.update(node.module.split("."))
            fields = fields_of.get(kind)
            if fields is None:
                fields = fields_of[kind] = tuple(name for name in kind._fields if name not in _PLAIN_FIELDS)
            for name in fields:
                value = getattr(node, name, None)
                if type(value) is list:
                    extend(value)
                elif value is not None:
                    append(value)
        level = below
    return FileContents(text.lower(), frozenset(identifiers), frozenset(kinds), depth)
