"""libcst-shaped nodes built from Python's ``ast``, for the screening pass: shape without formatting.

Parsing with libcst costs about six times ``ast.parse`` plus a walk that builds the same tree
shape, because libcst keeps every space, comment and parenthesis. The analysis reads none of
those: it asks about names, calls, assignments and blocks. So the engine first runs the analysis
and the rules on a tree built here from the ``ast`` it already has (one node per libcst node, the
same fields, the classes :mod:`leaklint.analysis.nodes` names: libcst's own or their mirror), and
parses with libcst only the files where a rule fires.
Those files are then linted exactly as before, so every reported position, message and fix still
comes from libcst's tree (:func:`leaklint.engine.lint_text`).

What the built tree leaves out, and why that is safe for a screen:

- whitespace, comments and parentheses: the fields hold libcst's defaults. A rule that reads a
  comment (``# noqa: B019``) can only report *more* on the built tree, never less;
- positions: messages that quote a line number are computed but thrown away with the pass;
- on the mirror, source text: ``code_for_node`` gives a sketch of the words (no libcst is
  imported), which only messages and fixes read, and both are thrown away with the pass.

What it keeps exactly, because decisions depend on it: node types and the fields that hold code;
the text of numbers and strings (``Integer.value`` is ``"0x10"``, not 16); ``elif`` versus
``else: if``; one ``SimpleStatementLine`` per line of ``;``-separated statements; an indented
block versus a one-line suite; the source order of a call's arguments. ``tests/test_from_ast.py``
compares built and parsed trees field by field on the fixtures, the rule examples and tricky
snippets.

Syntax this module does not rebuild (``match``, type parameters, ...) raises :class:`Unsupported`,
and the engine parses such a file with libcst straight away.
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from typing import Any, Callable, Sequence

from leaklint.analysis import nodes as cst
from leaklint.analysis.node_fields import field_defaults, field_names
from leaklint.code_cache import compiled


class Unsupported(Exception):
    """Syntax the builder does not reproduce; the caller falls back to libcst's parser."""


# --- making nodes without libcst's constructor ---------------------------------------------
#: node class -> a function that builds one from keyword arguments, the rest left at defaults.
_MAKERS: dict[type, Callable[..., Any]] = {}


def _maker(node_type: type) -> Callable[..., Any]:
    """A constructor for ``node_type`` that skips ``__init__``'s validation and its per-node
    whitespace objects: default values (``SimpleWhitespace("")``...) are made once per class and
    shared, which is safe because nodes are immutable and the screen never positions them."""
    parameters: list[str] = []
    assignments: list[str] = []
    namespace: dict[str, Any] = {"_new": object.__new__, "_set": object.__setattr__, "_type": node_type}
    defaults = field_defaults(node_type)
    for name in field_names(node_type):
        assignments.append(f"    _set(node, {name!r}, {name})")
        if name not in defaults:
            parameters.append(name)
            continue
        namespace[f"_default_{name}"] = defaults[name]
        parameters.append(f"{name}=_default_{name}")
    source = (
        f"def make(*, {', '.join(parameters)}):\n    node = _new(_type)\n" + "\n".join(assignments) + "\n    return node\n"
    ) if parameters else "def make():\n    return _new(_type)\n"
    exec(compiled(source), namespace)  # noqa: S102 - generated from dataclass field names only
    return namespace["make"]  # type: ignore[no-any-return]


def _make(node_type: type) -> Callable[..., Any]:
    maker = _MAKERS.get(node_type)
    if maker is None:
        # A mirror class's own constructor is already all that: plain, with shared defaults.
        maker = _MAKERS[node_type] = node_type if cst.FAMILY == cst.MIRROR else _maker(node_type)
    return maker


_BINARY = {
    ast.Add: cst.Add, ast.Sub: cst.Subtract, ast.Mult: cst.Multiply, ast.Div: cst.Divide,
    ast.FloorDiv: cst.FloorDivide, ast.Mod: cst.Modulo, ast.Pow: cst.Power, ast.MatMult: cst.MatrixMultiply,
    ast.LShift: cst.LeftShift, ast.RShift: cst.RightShift, ast.BitOr: cst.BitOr, ast.BitAnd: cst.BitAnd,
    ast.BitXor: cst.BitXor,
}
_AUGMENTED = {
    ast.Add: cst.AddAssign, ast.Sub: cst.SubtractAssign, ast.Mult: cst.MultiplyAssign, ast.Div: cst.DivideAssign,
    ast.FloorDiv: cst.FloorDivideAssign, ast.Mod: cst.ModuloAssign, ast.Pow: cst.PowerAssign,
    ast.MatMult: cst.MatrixMultiplyAssign, ast.LShift: cst.LeftShiftAssign, ast.RShift: cst.RightShiftAssign,
    ast.BitOr: cst.BitOrAssign, ast.BitAnd: cst.BitAndAssign, ast.BitXor: cst.BitXorAssign,
}
_UNARY = {ast.USub: cst.Minus, ast.UAdd: cst.Plus, ast.Invert: cst.BitInvert, ast.Not: cst.Not}
_BOOLEAN = {ast.And: cst.And, ast.Or: cst.Or}
_COMPARISON = {
    ast.Eq: cst.Equal, ast.NotEq: cst.NotEqual, ast.Lt: cst.LessThan, ast.LtE: cst.LessThanEqual,
    ast.Gt: cst.GreaterThan, ast.GtE: cst.GreaterThanEqual, ast.Is: cst.Is, ast.IsNot: cst.IsNot,
    ast.In: cst.In, ast.NotIn: cst.NotIn,
}
#: Operators carry no code: one shared instance per class.
_OPERATORS = {
    ast_type: _make(cst_type)()
    for table in (_BINARY, _UNARY, _BOOLEAN, _COMPARISON)
    for ast_type, cst_type in table.items()
}
_AUGMENTED_OPERATORS = {ast_type: _make(cst_type)() for ast_type, cst_type in _AUGMENTED.items()}
_CONVERSIONS = {-1: None, ord("s"): "s", ord("r"): "r", ord("a"): "a"}
_COMPOUND = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try,
    ast.With, ast.AsyncWith,
) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_NON_ASCII = re.compile(rb"[\x80-\xff]+")
_NUMBER = re.compile(r"[0-9.][0-9A-Za-z_.]*(?:[eE][-+]?[0-9_]+[jJ]?)?")
_STRING_START = re.compile(r"[A-Za-z]*('''|\"\"\"|'|\")")

Name = _make(cst.Name)
Attribute = _make(cst.Attribute)
Call = _make(cst.Call)
Arg = _make(cst.Arg)
Element = _make(cst.Element)
StarredElement = _make(cst.StarredElement)
SimpleStatementLine = _make(cst.SimpleStatementLine)
IndentedBlock = _make(cst.IndentedBlock)
Annotation = _make(cst.Annotation)
AsName = _make(cst.AsName)
Param = _make(cst.Param)
Else = _make(cst.Else)
_ASYNC = _make(cst.Asynchronous)()


def module_from_ast(text: str, tree: ast.Module) -> cst.Module:
    """The libcst-shaped tree of ``text``, whose ``ast`` is ``tree`` (see the module docs)."""
    builder = _Builder(text)
    try:
        return builder.module(tree)
    finally:
        builder.release()


class _Builder:
    """Converts one file's ``ast``; reads the source only for what ``ast`` does not keep."""

    def __init__(self, text: str) -> None:
        try:
            self.data = text.encode("utf-8")
        except UnicodeEncodeError:
            raise Unsupported("source holds lone surrogates") from None
        self.line_starts = [0] + [match.end() for match in _LINE_BREAK.finditer(self.data)]
        #: Lines holding non-ASCII characters, where ``ast``'s identifiers may differ from the
        #: source: Python normalizes them (NFKC: ``ｔｈ`` is ``th``), libcst keeps them as written.
        self.non_ascii_lines: frozenset[int] = frozenset(
            () if text.isascii() else (bisect.bisect_right(self.line_starts, m.start()) for m in _NON_ASCII.finditer(self.data))
        )
        self.expressions: dict[type, Callable[[Any], Any]] = {
            ast.Name: lambda n: Name(value=self.segment(n) if n.lineno in self.non_ascii_lines else n.id),
            ast.Constant: self.constant,
            ast.Attribute: lambda n: Attribute(value=self.expr(n.value), attr=Name(value=self.attribute_name(n))),
            ast.Call: self.call,
            ast.Subscript: lambda n: _make(cst.Subscript)(value=self.expr(n.value), slice=self.subscript(n.slice)),
            ast.BinOp: lambda n: _make(cst.BinaryOperation)(
                left=self.expr(n.left), operator=_OPERATORS[type(n.op)], right=self.expr(n.right)
            ),
            ast.UnaryOp: lambda n: _make(cst.UnaryOperation)(operator=_OPERATORS[type(n.op)], expression=self.expr(n.operand)),
            ast.BoolOp: self.boolean,
            ast.Compare: lambda n: _make(cst.Comparison)(
                left=self.expr(n.left),
                comparisons=tuple(
                    _make(cst.ComparisonTarget)(operator=_OPERATORS[type(op)], comparator=self.expr(c))
                    for op, c in zip(n.ops, n.comparators)
                ),
            ),
            ast.IfExp: lambda n: _make(cst.IfExp)(test=self.expr(n.test), body=self.expr(n.body), orelse=self.expr(n.orelse)),
            ast.Lambda: lambda n: _make(cst.Lambda)(params=self.parameters(n.args), body=self.expr(n.body)),
            ast.NamedExpr: lambda n: _make(cst.NamedExpr)(target=self.expr(n.target), value=self.expr(n.value)),
            ast.Await: lambda n: _make(cst.Await)(expression=self.expr(n.value)),
            ast.Yield: lambda n: _make(cst.Yield)(value=self.optional(n.value)),
            ast.YieldFrom: lambda n: _make(cst.Yield)(value=_make(cst.From)(item=self.expr(n.value))),
            ast.List: lambda n: _make(cst.List)(elements=self.elements(n.elts)),
            ast.Tuple: lambda n: _make(cst.Tuple)(elements=self.elements(n.elts)),
            ast.Set: lambda n: _make(cst.Set)(elements=self.elements(n.elts)),
            ast.Dict: self.dictionary,
            ast.ListComp: lambda n: _make(cst.ListComp)(elt=self.expr(n.elt), for_in=self.comprehension(n.generators)),
            ast.SetComp: lambda n: _make(cst.SetComp)(elt=self.expr(n.elt), for_in=self.comprehension(n.generators)),
            ast.GeneratorExp: lambda n: _make(cst.GeneratorExp)(elt=self.expr(n.elt), for_in=self.comprehension(n.generators)),
            ast.DictComp: lambda n: _make(cst.DictComp)(
                key=self.expr(n.key), value=self.expr(n.value), for_in=self.comprehension(n.generators)
            ),
            ast.JoinedStr: self.constant,
        }
        self.statements_by_type: dict[type, Callable[[Any], Any]] = {
            ast.Assign: lambda n: _make(cst.Assign)(
                targets=tuple(_make(cst.AssignTarget)(target=self.expr(t)) for t in n.targets), value=self.expr(n.value)
            ),
            ast.AugAssign: lambda n: _make(cst.AugAssign)(
                target=self.expr(n.target), operator=_AUGMENTED_OPERATORS[type(n.op)], value=self.expr(n.value)
            ),
            ast.AnnAssign: lambda n: _make(cst.AnnAssign)(
                target=self.expr(n.target), annotation=Annotation(annotation=self.expr(n.annotation)), value=self.optional(n.value)
            ),
            ast.Expr: lambda n: _make(cst.Expr)(value=self.expr(n.value)),
            ast.Return: lambda n: _make(cst.Return)(value=self.optional(n.value)),
            ast.Raise: lambda n: _make(cst.Raise)(
                exc=self.optional(n.exc), cause=_make(cst.From)(item=self.expr(n.cause)) if n.cause is not None else None
            ),
            ast.Assert: lambda n: _make(cst.Assert)(test=self.expr(n.test), msg=self.optional(n.msg)),
            ast.Delete: self.delete,
            ast.Pass: lambda n: _make(cst.Pass)(),
            ast.Break: lambda n: _make(cst.Break)(),
            ast.Continue: lambda n: _make(cst.Continue)(),
            ast.Global: lambda n: _make(cst.Global)(names=tuple(_make(cst.NameItem)(name=Name(value=self.identifier(s, n))) for s in n.names)),
            ast.Nonlocal: lambda n: _make(cst.Nonlocal)(names=tuple(_make(cst.NameItem)(name=Name(value=self.identifier(s, n))) for s in n.names)),
            ast.Import: lambda n: _make(cst.Import)(names=tuple(self.alias(a) for a in n.names)),
            ast.ImportFrom: self.import_from,
            ast.FunctionDef: self.function,
            ast.AsyncFunctionDef: self.function,
            ast.ClassDef: self.class_def,
            ast.If: self.if_statement,
            ast.For: self.for_loop,
            ast.AsyncFor: self.for_loop,
            ast.While: lambda n: _make(cst.While)(test=self.expr(n.test), body=self.block(n.body), orelse=self.else_block(n.orelse)),
            ast.Try: self.try_statement,
            ast.With: self.with_statement,
            ast.AsyncWith: self.with_statement,
        }
        if hasattr(ast, "TryStar"):
            self.statements_by_type[ast.TryStar] = self.try_statement

    def release(self) -> None:
        """Drop the dispatch tables: their lambdas and bound methods refer back to the builder, a
        cycle that would leave the builder and the file's bytes to the cyclic collector."""
        self.expressions.clear()
        self.statements_by_type.clear()

    # --- source text ----------------------------------------------------------------------------

    def offset(self, line: int, column: int) -> int:
        return self.line_starts[line - 1] + column

    def segment(self, node: ast.AST) -> str:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return self.data[start:end].decode("utf-8")

    def starts_with(self, node: ast.AST, prefix: bytes) -> bool:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        return self.data.startswith(prefix, start)

    def identifier(self, name: str, node: ast.AST, last_line: int | None = None) -> str:
        """A name ``ast`` keeps without a position of its own, somewhere in ``node``'s lines."""
        if self.non_ascii_lines:
            lines = range(node.lineno, (last_line or node.end_lineno) + 1)  # type: ignore[attr-defined]
            if any(line in self.non_ascii_lines for line in lines) and not self.written(name, lines):
                raise Unsupported("an identifier Python may have normalized")
        return name

    def written(self, name: str, lines: range) -> bool:
        """Whether ``name`` appears as it is in ``lines`` (a comment in ``é`` next to it is no
        reason to give up; a name written ``ｆ`` and normalized to ``f`` is)."""
        if not name.isascii():
            return False
        pattern = re.compile(rb"(?<![\w\x80-\xff])" + re.escape(name.encode()) + rb"(?![\w\x80-\xff])")
        start = self.line_starts[lines.start - 1]
        end = self.line_starts[lines.stop - 1] if lines.stop <= len(self.line_starts) else len(self.data)
        return pattern.search(self.data, start, end) is not None

    def attribute_name(self, node: ast.Attribute) -> str:
        """``ast`` normalizes identifiers (NFKC: ``ｔｈ`` is ``th``), libcst keeps them as written."""
        if node.end_lineno not in self.non_ascii_lines:
            return node.attr
        written = self.segment(node).rsplit(".", 1)[-1].strip()
        if not written.isidentifier():
            raise Unsupported("a non-ASCII attribute name written across lines")
        return written

    def alone_on_line(self, node: ast.AST) -> bool:
        """Nothing but indentation before ``node`` on its logical line: no code before it on its
        first line, and no backslash joining that line to the one before (``class A:\\``)."""
        line = node.lineno  # type: ignore[attr-defined]
        line_start = self.line_starts[line - 1]
        if self.data[line_start : line_start + node.col_offset].strip(b" \t\f"):  # type: ignore[attr-defined]
            return False
        if line == 1:
            return True
        previous = self.data[self.line_starts[line - 2] : line_start].rstrip(b"\r\n")
        return not (previous.endswith(b"\\") and b"#" not in previous)

    # --- module and statements -------------------------------------------------------------------
    def module(self, tree: ast.Module) -> cst.Module:
        return _make(cst.Module)(body=self.statements(tree.body))

    def statements(self, nodes: Sequence[ast.stmt]) -> tuple[Any, ...]:
        """Compound statements, and small ones grouped by line (``a = 1; b = 2`` is one line)."""
        built: list[Any] = []
        line: list[Any] = []
        last_end = -1
        for node in nodes:
            if isinstance(node, _COMPOUND):
                if line:
                    built.append(SimpleStatementLine(body=tuple(line)))
                    line = []
                built.append(self.statement(node))
                continue
            if line and node.lineno != last_end:
                built.append(SimpleStatementLine(body=tuple(line)))
                line = []
            line.append(self.statement(node))
            last_end = node.end_lineno  # type: ignore[assignment]
        if line:
            built.append(SimpleStatementLine(body=tuple(line)))
        return tuple(built)

    def statement(self, node: ast.stmt) -> Any:
        convert = self.statements_by_type.get(type(node))
        if convert is None:
            raise Unsupported(type(node).__name__)
        return convert(node)

    def block(self, nodes: Sequence[ast.stmt]) -> Any:
        """An indented block, or the one-line suite of ``if x: return``."""
        if self.alone_on_line(nodes[0]):
            return IndentedBlock(body=self.statements(nodes))
        if any(isinstance(node, _COMPOUND) for node in nodes):
            raise Unsupported("compound statement in a one-line suite")
        return _make(cst.SimpleStatementSuite)(body=tuple(self.statement(node) for node in nodes))

    def else_block(self, nodes: Sequence[ast.stmt]) -> Any:
        return Else(body=self.block(nodes)) if nodes else None

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Any:
        if getattr(node, "type_params", None):
            raise Unsupported("type parameters")
        return _make(cst.FunctionDef)(
            name=Name(value=self.identifier(node.name, node, node.lineno)),
            params=self.parameters(node.args),
            body=self.block(node.body),
            decorators=self.decorators(node.decorator_list),
            returns=Annotation(annotation=self.expr(node.returns)) if node.returns is not None else None,
            asynchronous=_ASYNC if isinstance(node, ast.AsyncFunctionDef) else None,
        )

    def class_def(self, node: ast.ClassDef) -> Any:
        if getattr(node, "type_params", None):
            raise Unsupported("type parameters")
        return _make(cst.ClassDef)(
            name=Name(value=self.identifier(node.name, node, node.lineno)),
            body=self.block(node.body),
            bases=tuple(self.argument(base) for base in node.bases),
            keywords=tuple(self.keyword(keyword) for keyword in node.keywords),
            decorators=self.decorators(node.decorator_list),
        )

    def decorators(self, nodes: list[ast.expr]) -> tuple[Any, ...]:
        return tuple(_make(cst.Decorator)(decorator=self.expr(d)) for d in nodes)

    def if_statement(self, node: ast.If) -> Any:
        orelse: Any = None
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) and self.starts_with(node.orelse[0], b"elif"):
            orelse = self.if_statement(node.orelse[0])
        elif node.orelse:
            orelse = Else(body=self.block(node.orelse))
        return _make(cst.If)(test=self.expr(node.test), body=self.block(node.body), orelse=orelse)

    def for_loop(self, node: ast.For | ast.AsyncFor) -> Any:
        return _make(cst.For)(
            target=self.expr(node.target),
            iter=self.expr(node.iter),
            body=self.block(node.body),
            orelse=self.else_block(node.orelse),
            asynchronous=_ASYNC if isinstance(node, ast.AsyncFor) else None,
        )

    def try_statement(self, node: Any) -> Any:
        star = not isinstance(node, ast.Try)
        handler = _make(cst.ExceptStarHandler if star else cst.ExceptHandler)
        return _make(cst.TryStar if star else cst.Try)(
            body=self.block(node.body),
            handlers=tuple(
                handler(
                    body=self.block(h.body),
                    type=self.optional(h.type),
                    name=AsName(name=Name(value=self.identifier(h.name, h, h.body[0].lineno))) if h.name is not None else None,
                )
                for h in node.handlers
            ),
            orelse=self.else_block(node.orelse),
            finalbody=_make(cst.Finally)(body=self.block(node.finalbody)) if node.finalbody else None,
        )

    def with_statement(self, node: ast.With | ast.AsyncWith) -> Any:
        items = tuple(
            _make(cst.WithItem)(
                item=self.expr(item.context_expr),
                asname=AsName(name=self.expr(item.optional_vars)) if item.optional_vars is not None else None,
            )
            for item in node.items
        )
        return _make(cst.With)(
            items=items, body=self.block(node.body), asynchronous=_ASYNC if isinstance(node, ast.AsyncWith) else None
        )

    def delete(self, node: ast.Delete) -> Any:
        if len(node.targets) == 1:
            return _make(cst.Del)(target=self.expr(node.targets[0]))
        return _make(cst.Del)(target=_make(cst.Tuple)(elements=self.elements(node.targets)))

    def alias(self, node: ast.alias) -> Any:
        return _make(cst.ImportAlias)(
            name=self.dotted(self.identifier(node.name, node)), asname=AsName(name=Name(value=self.identifier(node.asname, node))) if node.asname else None
        )

    def import_from(self, node: ast.ImportFrom) -> Any:
        if len(node.names) == 1 and node.names[0].name == "*":
            names: Any = _make(cst.ImportStar)()
        else:
            names = tuple(self.alias(a) for a in node.names)
        dot = _make(cst.Dot)()
        return _make(cst.ImportFrom)(
            module=self.dotted(self.identifier(node.module, node)) if node.module else None, names=names, relative=tuple(dot for _ in range(node.level))
        )

    def dotted(self, name: str) -> Any:
        head, *rest = name.split(".")
        node = Name(value=head)
        for part in rest:
            node = Attribute(value=node, attr=Name(value=part))
        return node

    # --- expressions ----------------------------------------------------------------------------
    def expr(self, node: ast.expr) -> Any:
        convert = self.expressions.get(type(node))
        if convert is None:
            raise Unsupported(type(node).__name__)
        return convert(node)

    def optional(self, node: ast.expr | None) -> Any:
        return None if node is None else self.expr(node)

    def call(self, node: ast.Call) -> Any:
        arguments: list[ast.AST] = [*node.args, *node.keywords]
        if node.keywords and node.args:
            arguments.sort(key=lambda a: (a.lineno, a.col_offset))  # type: ignore[attr-defined]
        return Call(
            func=self.expr(node.func),
            args=tuple(self.keyword(a) if isinstance(a, ast.keyword) else self.argument(a) for a in arguments),  # type: ignore[arg-type]
        )

    def argument(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Starred):
            return Arg(value=self.expr(node.value), star="*")
        return Arg(value=self.expr(node))

    def keyword(self, node: ast.keyword) -> Any:
        if node.arg is None:
            return Arg(value=self.expr(node.value), star="**")
        return Arg(value=self.expr(node.value), keyword=Name(value=self.identifier(node.arg, node)))

    def elements(self, nodes: Sequence[ast.expr]) -> tuple[Any, ...]:
        return tuple(
            StarredElement(value=self.expr(n.value)) if isinstance(n, ast.Starred) else Element(value=self.expr(n))
            for n in nodes
        )

    def dictionary(self, node: ast.Dict) -> Any:
        return _make(cst.Dict)(
            elements=tuple(
                _make(cst.StarredDictElement)(value=self.expr(v))
                if k is None
                else _make(cst.DictElement)(key=self.expr(k), value=self.expr(v))
                for k, v in zip(node.keys, node.values)
            )
        )

    def boolean(self, node: ast.BoolOp) -> Any:
        """``a or b or c`` is ``(a or b) or c`` in libcst: binary and left-associative."""
        operator = _OPERATORS[type(node.op)]
        make = _make(cst.BooleanOperation)
        built = self.expr(node.values[0])
        for value in node.values[1:]:
            built = make(left=built, operator=operator, right=self.expr(value))
        return built

    def comprehension(self, generators: list[ast.comprehension]) -> Any:
        """libcst chains ``for ... for ...`` through ``inner_for_in``."""
        inner = None
        make, make_if = _make(cst.CompFor), _make(cst.CompIf)
        for generator in reversed(generators):
            inner = make(
                target=self.expr(generator.target),
                iter=self.expr(generator.iter),
                ifs=tuple(make_if(test=self.expr(test)) for test in generator.ifs),
                inner_for_in=inner,
                asynchronous=_ASYNC if generator.is_async else None,
            )
        return inner

    def subscript(self, node: ast.expr) -> tuple[Any, ...]:
        """``x[a, b]`` has two elements in libcst; ``x[(a, b)]`` has one, a tuple."""
        element = _make(cst.SubscriptElement)
        if isinstance(node, ast.Tuple) and node.elts and not self.parenthesized(node):
            return tuple(element(slice=self.index(e)) for e in node.elts)
        return (element(slice=self.index(node)),)

    def index(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Slice):
            return _make(cst.Slice)(lower=self.optional(node.lower), upper=self.optional(node.upper), step=self.optional(node.step))
        if isinstance(node, ast.Starred):
            return _make(cst.Index)(value=self.expr(node.value), star="*")
        return _make(cst.Index)(value=self.expr(node))

    def parenthesized(self, node: ast.Tuple) -> bool:
        """Whether the tuple has its own parentheses: it starts before its first element, and the
        parenthesis it starts with closes at its end (not ``(a), b``)."""
        first = node.elts[0]
        if (first.lineno, first.col_offset) == (node.lineno, node.col_offset):
            return False
        depth = 0
        tokens = list(_tokens(self.segment(node)))
        for index, token in enumerate(tokens):
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth -= 1
                if depth == 0:
                    return all(t.type in _TRAILING_TOKENS for t in tokens[index + 1 :])
        return False

    def parameters(self, node: ast.arguments) -> Any:
        positional = [*node.posonlyargs, *node.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(node.defaults)) + list(node.defaults)
        params = [self.param(arg, default) for arg, default in zip(positional, defaults)]
        posonly = len(node.posonlyargs)
        star_arg: Any = cst.MaybeSentinel.DEFAULT
        if node.vararg is not None:
            star_arg = self.param(node.vararg, None, "*")
        elif node.kwonlyargs:
            star_arg = _make(cst.ParamStar)()
        return _make(cst.Parameters)(
            params=tuple(params[posonly:]),
            star_arg=star_arg,
            kwonly_params=tuple(self.param(arg, default) for arg, default in zip(node.kwonlyargs, node.kw_defaults)),
            star_kwarg=self.param(node.kwarg, None, "**") if node.kwarg is not None else None,
            posonly_params=tuple(params[:posonly]),
            posonly_ind=_make(cst.ParamSlash)() if posonly else cst.MaybeSentinel.DEFAULT,
        )

    def param(self, node: ast.arg, default: ast.expr | None, star: str = "") -> Any:
        return Param(
            name=Name(value=self.identifier(node.arg, node)),
            annotation=Annotation(annotation=self.expr(node.annotation)) if node.annotation is not None else None,
            default=self.optional(default),
            star=star,
        )

    # --- literals -------------------------------------------------------------------------------
    #: Inside an f-string's expressions ``ast`` positions are not reliable (Python 3.11 and
    #: older), so literals there take their text from their values.
    in_formatted = False

    def constant(self, node: ast.Constant | ast.JoinedStr) -> Any:
        if isinstance(node, ast.JoinedStr):
            if self.in_formatted:  # f"{f'{x}'}": no source to read, the values tell the parts
                return _make(cst.FormattedString)(parts=self.formatted_parts(node.values, ""))
            return self.strings(node)
        value = node.value
        if value is None or value is True or value is False:
            return Name(value=repr(value))
        if value is ...:
            return _make(cst.Ellipsis)()
        if isinstance(value, (str, bytes)):
            return _make(cst.SimpleString)(value=repr(value)) if self.in_formatted else self.strings(node)
        if not isinstance(value, (int, float, complex)):
            raise Unsupported(f"constant {type(value).__name__}")
        if self.in_formatted:
            text = repr(value)
        else:
            text = self.segment(node)
            if _NUMBER.fullmatch(text) is None:
                raise Unsupported("a number ast does not locate")
        if isinstance(value, int):
            return _make(cst.Integer)(value=text)
        if isinstance(value, float):
            return _make(cst.Float)(value=text)
        return _make(cst.Imaginary)(value=text)

    def strings(self, node: ast.Constant | ast.JoinedStr) -> Any:
        """One string literal, or libcst's right-nested ``ConcatenatedString`` of ``"a" "b"``."""
        literals = _string_literals(self.segment(node))
        if len(literals) == 1:
            return self.string(literals[0], node)
        parts = [self.string(literal, None) for literal in literals]
        built = parts[-1]
        make = _make(cst.ConcatenatedString)
        for part in reversed(parts[:-1]):
            built = make(left=part, right=built)
        return built

    def string(self, literal: str, node: ast.Constant | ast.JoinedStr | None) -> Any:
        """One literal; ``node`` is its ``ast`` when it is the whole string expression."""
        match = _STRING_START.match(literal)
        if match is None:
            raise Unsupported("a string ast does not locate")
        prefix = literal[: match.start(1)]
        if "f" not in prefix.lower():
            return _make(cst.SimpleString)(value=literal)
        if not isinstance(node, ast.JoinedStr):  # one f-string of several: read it on its own
            try:
                node = ast.parse(literal, mode="eval").body  # type: ignore[assignment]
            except SyntaxError:
                raise Unsupported("an f-string the builder cannot re-read") from None
            if not isinstance(node, ast.JoinedStr):
                raise Unsupported("an f-string the builder cannot re-read")
        quote = match.group(1)
        self.in_formatted = True
        try:
            parts = self.formatted_parts(node.values, "".join(literal.split()))
        finally:
            self.in_formatted = False
        return _make(cst.FormattedString)(parts=parts, start=prefix + quote, end=quote)

    def formatted_parts(self, values: list[ast.expr], source: str) -> tuple[Any, ...]:
        """The parts of an f-string whose source, without whitespace, is ``source``."""
        text, expression = _make(cst.FormattedStringText), _make(cst.FormattedStringExpression)
        parts = []
        for index, value in enumerate(values):
            if isinstance(value, ast.Constant):
                literal = str(value.value)
                following = values[index + 1] if index + 1 < len(values) else None
                if isinstance(following, ast.FormattedValue):
                    literal = _without_debug_text(literal, following, source)
                if literal:
                    parts.append(text(value=literal.replace("{", "{{").replace("}", "}}")))
            elif isinstance(value, ast.FormattedValue):
                spec = value.format_spec
                parts.append(
                    expression(
                        expression=self.expr(value.value),
                        conversion=_CONVERSIONS[value.conversion],
                        format_spec=self.formatted_parts(spec.values, source) if isinstance(spec, ast.JoinedStr) else None,
                    )
                )
            else:
                raise Unsupported(f"f-string part {type(value).__name__}")
        return tuple(parts)


def _without_debug_text(literal: str, value: ast.FormattedValue, fstring: str) -> str:
    """``f"{x=}"`` is ``"x=" + repr(x)`` in ``ast`` but one expression part in libcst: drop the
    ``x=`` that ``ast`` added to the text before it (``fstring``: the literal without whitespace,
    to tell ``{x=}`` from ``x={x}``)."""
    stripped = literal.rstrip()
    if not stripped.endswith("="):
        return literal
    source = "".join(ast.unparse(value.value).split())
    squeezed = "".join(stripped[:-1].split())
    debug = "{" + source + "="
    if not squeezed.endswith(source) or not any(
        not fstring.startswith("=", at + len(debug)) for at in _occurrences(fstring, debug)
    ):
        return literal
    kept, remaining = len(stripped) - 1, len(source)
    while remaining:  # walk back over the expression's characters, skipping spaces
        kept -= 1
        if not stripped[kept].isspace():
            remaining -= 1
    return literal[:kept]


def _occurrences(text: str, part: str) -> list[int]:
    found, at = [], text.find(part)
    while at >= 0:
        found.append(at)
        at = text.find(part, at + 1)
    return found


_TRAILING_TOKENS = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.ENDMARKER})


def _tokens(code: str) -> list[tokenize.TokenInfo]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        raise Unsupported("cannot tokenize a tuple") from None


def _string_literals(segment: str) -> list[str]:
    """The literals of an implicitly concatenated string (``"a" "b"``), or the one literal."""
    match = _STRING_START.match(segment)
    if match is None:
        raise Unsupported("a string ast does not locate")
    quote = match.group(1)
    if segment.find(quote, match.end()) == len(segment) - len(quote):
        return [segment]  # the usual case: the first closing quote ends the segment
    literals = []
    position, end = 0, len(segment)
    while position < end:
        character = segment[position]
        if character in " \t\f\r\n\\":
            position += 1
            continue
        if character == "#":
            newline = segment.find("\n", position)
            position = end if newline < 0 else newline
            continue
        match = _STRING_START.match(segment, position)
        if match is None:
            raise Unsupported("a string ast does not locate")
        quote = match.group(1)
        cursor = match.end()
        while not segment.startswith(quote, cursor):
            if cursor >= end:
                raise Unsupported("a string ast does not locate")
            cursor += 2 if segment[cursor] == "\\" else 1
        literals.append(segment[position : cursor + len(quote)])
        position = cursor + len(quote)
    return literals
