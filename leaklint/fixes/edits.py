"""Turn a rule's :class:`~leaklint.fixes.spec.SuggestedFix` into character-offset text edits.

Every conversion checks the text it is about to change: the span of a replaced node must read
exactly as the node's own code, a statement to wrap must sit on lines of its own. When a check
fails the fix is dropped (:class:`FixUnavailable`) — a finding without a fix is better than a fix
that edits the wrong characters. Indenting and dedenting skip the lines that start inside a
multi-line string, so string values never change.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Mapping

import libcst as cst
from leaklint.findings import Fix, TextEdit
from leaklint.fixes.apply import line_starts
from leaklint.fixes.spec import (
    AddDecorator,
    EditSpec,
    InsertLinesBefore,
    RemoveArgument,
    RemoveStatement,
    Replace,
    SuggestedFix,
    Surround,
    UnwrapWith,
    WrapInWith,
    bare_code,
    module_level_imports,
)

if TYPE_CHECKING:
    from libcst.metadata import CodeRange

_INDENT = re.compile(r"[ \t]*")
_LINE_END = re.compile(r"\r\n|\r|\n")
_DEF_LINE = re.compile(r"([ \t]*)def[ \t]+")


class FixUnavailable(Exception):
    """The fix cannot be placed safely in this file; the finding is reported without it."""


def nodes_to_position(fix: SuggestedFix) -> list[cst.CSTNode]:
    """The nodes whose positions :meth:`SourceEditor.edits_for` will ask for."""
    nodes: list[cst.CSTNode] = []
    for spec in fix.edits:
        if isinstance(spec, (Replace, Surround)):
            nodes.append(spec.node)
        elif isinstance(spec, InsertLinesBefore):
            nodes.append(spec.anchor)
        elif isinstance(spec, AddDecorator):
            nodes.append(spec.function.name)
        elif isinstance(spec, RemoveArgument):
            nodes.extend([spec.call, spec.call.func, *spec.call.args])
        else:
            nodes.append(spec.statement)
            if isinstance(spec, UnwrapWith) and isinstance(spec.statement.body, cst.IndentedBlock) and spec.statement.body.body:
                nodes.append(spec.statement.body.body[0])  # _unwrap measures the body's indentation
    return nodes


@dataclass
class SourceEditor:
    """One file's text, syntax tree and node positions: everything a conversion needs."""

    module: cst.Module
    text: str
    positions: Mapping[cst.CSTNode, CodeRange]

    @cached_property
    def starts(self) -> list[int]:
        return line_starts(self.text)

    @cached_property
    def string_continuation_lines(self) -> frozenset[int]:
        """1-based lines that begin inside a multi-line string (their indentation is content)."""
        inside: set[int] = set()
        open_fstrings: list[int] = []
        try:
            for token in tokenize.generate_tokens(io.StringIO(self.text).readline):
                name = tokenize.tok_name[token.type]
                if name == "STRING" and token.end[0] > token.start[0]:
                    inside.update(range(token.start[0] + 1, token.end[0] + 1))
                elif name == "FSTRING_START":
                    open_fstrings.append(token.start[0])
                elif name == "FSTRING_END" and open_fstrings:
                    first = open_fstrings.pop()
                    inside.update(range(first + 1, token.end[0] + 1))
        except (tokenize.TokenError, SyntaxError) as error:
            raise FixUnavailable(f"cannot tokenize: {error}") from None
        return frozenset(inside)

    # --- offsets ------------------------------------------------------------------------------
    def offset(self, line: int, column: int) -> int:
        return self.starts[line - 1] + column

    def span(self, node: cst.CSTNode) -> tuple[int, int, CodeRange]:
        where = self.positions.get(node)
        if where is None:
            raise FixUnavailable("node not positioned")
        return self.offset(where.start.line, where.start.column), self.offset(where.end.line, where.end.column), where

    def line_text(self, line: int) -> str:
        """Line ``line`` (1-based) without its line break."""
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        return _LINE_END.sub("", self.text[start:end], count=1)

    def line_end(self, line: int) -> int:
        """Offset just past line ``line``'s line break (or the end of the text)."""
        return self.starts[line] if line < len(self.starts) else len(self.text)

    def newline(self, line: int) -> str:
        start = self.starts[line - 1]
        found = _LINE_END.search(self.text, start, self.line_end(line))
        return found.group() if found else self.module.default_newline

    def indent_unit(self, indent: str) -> str:
        if "\t" in indent:
            return "\t"
        unit = self.module.default_indent
        return unit if unit.strip(" ") == "" and unit else "    "

    # --- conversions --------------------------------------------------------------------------
    def fix(self, suggested: SuggestedFix) -> Fix:
        # Imports first: at the same offset as another insertion they must come before it.
        edits = self._import_edits(suggested.imports) + [self._edit(spec) for spec in suggested.edits]
        unique = list(dict.fromkeys(edits))
        ordered = sorted(unique, key=lambda e: (e.start, e.end))  # stable: same-point ones keep their order
        return Fix(suggested.title, suggested.applicability, tuple(self._merge_insertions(ordered)))

    def _merge_insertions(self, edits: list[TextEdit]) -> list[TextEdit]:
        """Fold an insertion into the edit that follows it at the same point (an added import and
        a decorator both at the top of the file): one replacement, so that tools applying the
        edits one by one (SARIF viewers, IDEs) cannot put them in the other order."""
        merged: list[TextEdit] = []
        for edit in edits:
            previous = merged[-1] if merged else None
            if previous is not None and previous.start == previous.end == edit.start:
                merged[-1] = self._text_edit(previous.start, edit.end, previous.replacement + edit.replacement)
            else:
                merged.append(edit)
        return merged

    def _edit(self, spec: EditSpec) -> TextEdit:
        if isinstance(spec, Replace):
            return self._replace(spec)
        if isinstance(spec, Surround):
            return self._surround(spec)
        if isinstance(spec, InsertLinesBefore):
            return self._insert_before(spec)
        if isinstance(spec, WrapInWith):
            return self._wrap(spec)
        if isinstance(spec, UnwrapWith):
            return self._unwrap(spec)
        if isinstance(spec, RemoveStatement):
            return self._remove(spec)
        if isinstance(spec, AddDecorator):
            return self._decorate(spec)
        if isinstance(spec, RemoveArgument):
            return self._remove_argument(spec)
        raise FixUnavailable(f"unknown edit {type(spec).__name__}")

    def _text_edit(self, start: int, end: int, replacement: str) -> TextEdit:
        line, column = self._line_column(start)
        end_line, end_column = self._line_column(end)
        return TextEdit(start, end, replacement, line, column, end_line, end_column)

    def _line_column(self, offset: int) -> tuple[int, int]:
        """1-based line and column of ``offset``."""
        low, high = 0, len(self.starts) - 1
        while low < high:
            middle = (low + high + 1) // 2
            if self.starts[middle] <= offset:
                low = middle
            else:
                high = middle - 1
        return low + 1, offset - self.starts[low] + 1

    def _replace(self, spec: Replace) -> TextEdit:
        start, end, _ = self.span(spec.node)
        if isinstance(spec.node, cst.BaseExpression):
            expected = bare_code(self.module, spec.node)
        else:
            expected = self.module.code_for_node(spec.node)
        if self.text[start:end] != expected:
            raise FixUnavailable("the source no longer reads as the node")
        return self._text_edit(start, end, spec.code)

    def _surround(self, spec: Surround) -> TextEdit:
        start, end, _ = self.span(spec.node)
        source = self.text[start:end]
        # Continuation lines carry the block's indentation, which the node's own code lacks:
        # compare without whitespace.
        if "".join(source.split()) != "".join(bare_code(self.module, spec.node).split()):  # type: ignore[arg-type]
            raise FixUnavailable("the source no longer reads as the node")
        return self._text_edit(start, end, f"{spec.before}{source}{spec.after}")

    def _own_lines(self, node: cst.CSTNode) -> tuple[int, int, str]:
        """First and last line of ``node``, which must start its first line; and its indentation."""
        start, _, where = self.span(node)
        first = where.start.line
        before = self.text[self.starts[first - 1] : start]
        if before.strip(" \t\f"):
            raise FixUnavailable("the statement shares its first line with other code")
        return first, where.end.line, before

    def _insert_before(self, spec: InsertLinesBefore) -> TextEdit:
        first, _, indent = self._own_lines(spec.anchor)
        newline = self.newline(first)
        at = self.starts[first - 1]
        return self._text_edit(at, at, "".join(f"{indent}{line}{newline}" for line in spec.lines))

    def _statement_lines(self, statement: cst.CSTNode) -> tuple[int, int, str]:
        first, last, indent = self._own_lines(statement)
        _, end, _ = self.span(statement)
        if self.text[end : self.line_end(last)].strip(" \t\f\r\n") and not self.text[end:].lstrip(" \t\f").startswith("#"):
            raise FixUnavailable("the statement shares its last line with other code")
        return first, last, indent

    def _wrap(self, spec: WrapInWith) -> TextEdit:
        first, last, indent = self._statement_lines(spec.statement)
        unit = self.indent_unit(indent)
        newline = self.newline(first)
        lines = [f"{indent}with {spec.header}:{newline}"]
        for number in range(first, last + 1):
            line = self.text[self.starts[number - 1] : self.line_end(number)]
            blank = not line.strip()
            lines.append(line if blank or number in self.string_continuation_lines else unit + line)
        start = self.starts[first - 1]
        return self._text_edit(start, self.line_end(last), "".join(lines))

    def _unwrap(self, spec: UnwrapWith) -> TextEdit:
        first, last, indent = self._statement_lines(spec.statement)
        body = spec.statement.body
        if not isinstance(body, cst.IndentedBlock) or not body.body:
            raise FixUnavailable("only an indented with-block can be unwrapped")
        _, _, body_start = self.span(body.body[0])
        body_indent = self.line_text(body_start.start.line)[: body_start.start.column]
        if not body_indent.startswith(indent) or body_indent == indent:
            raise FixUnavailable("unexpected indentation")
        extra = body_indent[len(indent) :]
        header_last = body_start.start.line - 1 - len(body.body[0].leading_lines)
        lines = []
        for number in range(header_last + 1, last + 1):
            line = self.text[self.starts[number - 1] : self.line_end(number)]
            if number not in self.string_continuation_lines and line.startswith(indent + extra):
                line = indent + line[len(indent) + len(extra) :]
            lines.append(line)
        return self._text_edit(self.starts[first - 1], self.line_end(last), "".join(lines))

    def _remove(self, spec: RemoveStatement) -> TextEdit:
        first, last, indent = self._statement_lines(spec.statement)
        if spec.keep_pass:
            return self._text_edit(self.starts[first - 1], self.line_end(last), f"{indent}pass{self.newline(last)}")
        return self._text_edit(self.starts[first - 1], self.line_end(last), "")

    def _remove_argument(self, spec: RemoveArgument) -> TextEdit:
        args = list(spec.call.args)
        index = next(i for i, arg in enumerate(args) if arg is spec.argument)
        start, end, _ = self.span(spec.argument)
        _, call_end, _ = self.span(spec.call)
        close = call_end - 1
        if self.text[close] != ")":
            raise FixUnavailable("unexpected call syntax")
        open_ = self.span(spec.call.func)[1]
        while open_ < close and self.text[open_] in " \t\f)":
            open_ += 1  # past the callee's own parentheses: `(f)(x)`
        if self.text[open_] != "(":
            raise FixUnavailable("unexpected call syntax")
        # Between the neighbours: from the end of the previous argument (or the opening
        # parenthesis) to the start of the next one (or the closing parenthesis).
        before = self.span(args[index - 1])[1] if index > 0 else open_ + 1
        after = self.span(args[index + 1])[0] if index + 1 < len(args) else close
        if "#" in self.text[before:start] + self.text[end:after]:
            # A comment next to the argument would end up describing another line, or be lost.
            raise FixUnavailable("a comment sits next to the argument")
        if len(args) == 1:
            cut = (open_ + 1, close)  # `f(\n    flag=True,\n)` -> `f()`
        elif index > 0:
            cut = (before, end)  # ", flag=True"
        else:
            cut = (start, after)  # "flag=True, "
        return self._text_edit(*cut, "")

    def _decorate(self, spec: AddDecorator) -> TextEdit:
        start, _, where = self.span(spec.function.name)
        line = where.start.line
        before = self.text[self.starts[line - 1] : start]
        header = _DEF_LINE.fullmatch(before)
        if header is None:
            raise FixUnavailable("the def line is not in the usual form")
        at = self.starts[line - 1]
        return self._text_edit(at, at, f"{header.group(1)}@{spec.decorator}{self.newline(line)}")

    # --- imports ------------------------------------------------------------------------------
    def _import_edits(self, modules: tuple[str, ...]) -> list[TextEdit]:
        bound = module_level_imports(self.module)
        missing = [name for name in modules if bound.get(name) != name]
        if not missing:
            return []
        at, newline = self._import_point()
        text = "".join(f"import {name}{newline}" for name in missing)
        if at == len(self.text) and self.text and not self.text.endswith(("\n", "\r")):
            text = newline + text
        return [self._text_edit(at, at, text)]

    def _import_point(self) -> tuple[int, str]:
        """After the file's leading imports (and docstring); a late import elsewhere does not
        count, since code between the two could already need the name."""
        leading, following = leading_block(self.module)
        if leading:
            last_line = self.positions_of(leading[-1]).end.line
            return self.line_end(last_line), self.newline(last_line)
        if following is None:
            return len(self.text), self.module.default_newline
        first_line = self.positions_of(following).start.line
        return self.starts[first_line - 1], self.newline(first_line)

    def positions_of(self, node: cst.CSTNode) -> CodeRange:
        where = self.positions.get(node)
        if where is None:
            raise FixUnavailable("node not positioned")
        return where


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def leading_block(module: cst.Module) -> tuple[list[cst.BaseStatement], cst.BaseStatement | None]:
    """The docstring and imports the file starts with, and the first statement after them."""
    leading: list[cst.BaseStatement] = []
    for index, statement in enumerate(module.body):
        if _is_import(statement) or (index == 0 and _is_docstring(statement)):
            leading.append(statement)
            continue
        return leading, statement
    return leading, None


def import_anchor_nodes(module: cst.Module) -> list[cst.CSTNode]:
    """The statements whose positions placing an added import needs."""
    leading, following = leading_block(module)
    return [*leading[-1:], *([following] if following is not None else [])]
