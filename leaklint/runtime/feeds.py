"""Which lines feed the value a finding keeps: a backward slice over the project's libcst trees.

A leak is reported where a tensor is *kept* (``losses.append(loss)``, ``total += loss``,
``self.cache[key] = out``), but the memory that piles up was *allocated* where the tensor and its
graph were computed (``loss = criterion(model(x), y)``, and the lines of a project's own
``forward``). ``leaklint run`` names allocation lines; to say which finding they confirm, this
module follows the data backwards from the finding's statement:

* through assignments in the same function (any order: loops carry values around), to every
  statement that binds a name the statement reads, and on to what those read;
* through ``self.x`` to every method of the class that binds ``self.x``;
* into the functions and classes of the project that those statements call (their whole bodies:
  an allocation inside a helper is attributed to the helper's line);
* out of a function through its parameters, to the arguments its project callers pass.

It is deliberately generous (a slice, not a proof): it decides which measured sites a finding
may explain, and a site it claims was measured to grow.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterable, Iterator

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from leaklint.analysis.names import dotted_name, names_read
from leaklint.analysis.structure import bound_names
from leaklint.analysis.walk import calls_in

Location = tuple[str, int]
#: How many calls deep the slice follows parameters out to callers, and calls into callees.
MAX_DEPTH = 3


@dataclass(eq=False)
class _Statement:
    start: int
    end: int
    binds: set[str]
    reads: set[str]
    calls: set[str]  # dotted callee names
    scope: "_Scope"
    #: Per call made: the callee, what each positional and keyword argument reads, and whether
    #: ``*args``/``**kwargs`` are passed (then any argument may be any parameter).
    arguments: list["_Arguments"] = field(default_factory=list)


@dataclass
class _Arguments:
    callee: str
    positional: list[set[str]]
    keywords: dict[str, set[str]]
    starred: set[str] | None


@dataclass(eq=False)
class _Scope:
    """A function (or the module): its statements, parameters and the class it is a method of."""

    path: str
    name: str
    start: int
    end: int
    params: list[str] = field(default_factory=list)
    cls: str | None = None
    statements: list[_Statement] = field(default_factory=list)


@dataclass
class _File:
    scopes: list[_Scope]
    #: Class name -> (first line, last line).
    classes: dict[str, tuple[int, int]]


def _leaf(name: str) -> str:
    return name.rpartition(".")[2]


class _Indexer(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        module = _Scope(path, "<module>", 1, 1 << 30)
        self.scopes = [module]
        self._stack = [module]
        self._classes: list[str] = []
        self.classes: dict[str, tuple[int, int]] = {}

    def _span(self, node: cst.CSTNode) -> tuple[int, int]:
        position = self.get_metadata(PositionProvider, node)
        return position.start.line, position.end.line

    def _add(self, node: cst.CSTNode, binds: Iterable[str], reads_from: Iterable[cst.CSTNode], start: int | None = None, end: int | None = None) -> None:
        first, last = self._span(node)
        reads: set[str] = set()
        arguments: list[_Arguments] = []
        for part in reads_from:
            reads |= names_read(part)
            arguments.extend(_calls_in(part))
        calls = {found.callee for found in arguments}
        self._stack[-1].statements.append(_Statement(start or first, end or last, set(binds), reads, calls, self._stack[-1], arguments))

    # Scopes
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node.name.value)
        self.classes.setdefault(node.name.value, self._span(node))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        start, end = self._span(node)
        params = [p.name.value for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)]
        in_class = self._classes[-1] if self._classes and self._stack[-1].cls is None else None
        scope = _Scope(self.path, node.name.value, start, end, params, in_class)
        self.scopes.append(scope)
        self._stack.append(scope)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._stack.pop()

    # Statements
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        start, end = self._span(node)
        for small in node.body:
            binds: list[str] = []
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    binds.extend(_targets(target.target))
                self._add(small, binds, [small.value, *(t.target for t in small.targets)], start, end)
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                value = small.value
                self._add(small, _targets(small.target), [small.target, *([value] if value is not None else [])], start, end)
            elif isinstance(small, cst.Expr):
                # A method call on a receiver (``outputs.append(out)``) changes the receiver.
                receiver = _mutated_receiver(small.value)
                self._add(small, [receiver] if receiver else [], [small.value], start, end)
            elif isinstance(small, cst.Return):
                self._add(small, ["<return>"], [small.value] if small.value is not None else [], start, end)

    def visit_For(self, node: cst.For) -> None:
        start = self._span(node)[0]
        self._add(node, _targets(node.target), [node.iter], start, start)

    def visit_With(self, node: cst.With) -> None:
        start = self._span(node)[0]
        binds = [name for item in node.items if item.asname is not None for name in _targets(item.asname.name)]
        self._add(node, binds, [item.item for item in node.items], start, start)


def _targets(target: cst.BaseExpression) -> list[str]:
    """What an assignment target changes: ``a``, ``self.c``, and ``x`` for ``x[k] = ...``."""
    if isinstance(target, cst.Subscript):
        name = dotted_name(target.value)
        return [name] if name else []
    names = bound_names(target)
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            if isinstance(element.value, cst.Subscript):
                names.extend(_targets(element.value))
    return names


def _mutated_receiver(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return dotted_name(expr.func.value)
    return None


def _calls_in(node: cst.CSTNode) -> Iterator[_Arguments]:
    for call in calls_in(node):
        name = dotted_name(call.func)
        if name:
            positional = [names_read(a.value) for a in call.args if a.keyword is None and not a.star]
            keywords = {a.keyword.value: names_read(a.value) for a in call.args if a.keyword is not None}
            star = [a for a in call.args if a.star]
            starred = set().union(*(names_read(a.value) for a in star)) if star else None
            yield _Arguments(name, positional, keywords, starred)


def _feeds(read: str, bound: str) -> bool:
    """Whether binding ``bound`` can change what reading ``read`` sees (``x`` feeds ``x.y``)."""
    return read == bound or read.startswith(bound + ".") or bound.startswith(read + ".")


class ProjectSlices:
    """The slices of the files given (parsed once each, on first use)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._paths = [os.path.abspath(p) for p in paths]
        self._files: dict[str, _File | None] = {}

    def _file(self, path: str) -> _File | None:
        if path not in self._files:
            try:
                with open(path, encoding="utf-8") as handle:
                    module = cst.parse_module(handle.read())
            except (OSError, UnicodeDecodeError, cst.ParserSyntaxError):
                self._files[path] = None
            else:
                indexer = _Indexer(path)
                MetadataWrapper(module, unsafe_skip_copy=True).visit(indexer)
                self._files[path] = _File(indexer.scopes, indexer.classes)
        return self._files[path]

    def _all_scopes(self) -> Iterator[_Scope]:
        for path in self._paths:
            found = self._file(path)
            if found is not None:
                yield from found.scopes

    def feeding(self, path: str, first: int, last: int | None = None) -> set[Location]:
        """Every ``(path, line)`` whose values flow into the statement(s) on lines
        ``first..last`` of ``path`` (those lines included)."""
        path = os.path.abspath(path)
        last = first if last is None else last
        lines: set[Location] = {(path, line) for line in range(first, last + 1)}
        found = self._file(path)
        if found is None:
            return lines
        seeds = [s for scope in found.scopes for s in scope.statements if s.start <= last and s.end >= first]
        if not seeds:
            return lines
        innermost = min(seeds, key=lambda s: s.end - s.start)
        seeds = [s for s in seeds if s.start == innermost.start]
        pending: list[tuple[_Scope, str, int]] = []
        done_names: set[tuple[int, str]] = set()
        done_calls: set[str] = set()
        for statement in seeds:
            self._take(statement, lines, pending, done_calls, 0)
            pending.extend((statement.scope, name, 0) for name in statement.binds)
        while pending:
            scope, name, depth = pending.pop()
            key = (id(scope), name)
            if key in done_names:
                continue
            done_names.add(key)
            for statement in self._binders(scope, name):
                self._take(statement, lines, pending, done_calls, depth)
            root = name.partition(".")[0]
            if root in scope.params and root != "self" and depth < MAX_DEPTH:
                self._callers(scope, scope.params.index(root), root, lines, pending, depth + 1)
        return lines

    def _binders(self, scope: _Scope, name: str) -> Iterator[_Statement]:
        if name.startswith("self.") and scope.cls is not None:
            scopes = [s for s in self._all_scopes() if s.path == scope.path and s.cls == scope.cls]
        else:
            scopes = [scope]
            module = next((s for s in self._all_scopes() if s.path == scope.path and s.name == "<module>"), None)
            if module is not None and module is not scope and not any(_feeds(name, b) for s in scope.statements for b in s.binds):
                scopes.append(module)  # a global the function reads
        for owner in scopes:
            for statement in owner.statements:
                if any(_feeds(name, bound) for bound in statement.binds):
                    yield statement

    def _take(self, statement: _Statement, lines: set[Location], pending: list, done_calls: set[str], depth: int) -> None:
        scope = statement.scope
        lines.update((scope.path, line) for line in range(statement.start, statement.end + 1))
        pending.extend((scope, name, depth) for name in statement.reads)
        for call in statement.calls:
            if call in done_calls:
                continue
            done_calls.add(call)
            self._callee_lines(scope, call, lines, done_calls)

    def _callee_lines(self, scope: _Scope, call: str, lines: set[Location], done_calls: set[str]) -> None:
        """Lines of the project code a call runs: a function or method of that name, a class
        instantiated under that name (its methods run when the instance is called)."""
        leaf = _leaf(call)
        for other in self._all_scopes():
            if other.name == leaf and other.name != "<module>":
                lines.update((other.path, line) for line in range(other.start, other.end + 1))
        for path in self._paths:
            found = self._file(path)
            if found is None:
                continue
            if leaf in found.classes:
                start, end = found.classes[leaf]
                lines.update((path, line) for line in range(start, end + 1))
        # ``model(x)`` where ``model = Net(...)``: the class of the instance.
        for statement in self._binders(scope, call):
            for made in statement.calls:
                made_leaf = _leaf(made)
                if made_leaf in done_calls:
                    continue
                for path in self._paths:
                    found = self._file(path)
                    if found is not None and made_leaf in found.classes:
                        done_calls.add(made_leaf)
                        start, end = found.classes[made_leaf]
                        lines.update((path, line) for line in range(start, end + 1))

    def _callers(self, scope: _Scope, index: int, param: str, lines: set[Location], pending: list, depth: int) -> None:
        """The arguments project callers pass for parameter ``param`` (at ``index``) of ``scope``."""
        if scope.name == "<module>":
            return
        position = index - (1 if scope.cls is not None and scope.params[:1] == ["self"] else 0)
        for caller in self._all_scopes():
            for statement in caller.statements:
                for call in statement.arguments:
                    if _leaf(call.callee) != scope.name:
                        continue
                    argument = call.keywords.get(param)
                    if argument is None and 0 <= position < len(call.positional):
                        argument = call.positional[position]
                    if argument is None:
                        argument = call.starred
                    if argument is None:
                        continue
                    lines.update((caller.path, line) for line in range(statement.start, statement.end + 1))
                    pending.extend((caller, name, depth) for name in argument)
