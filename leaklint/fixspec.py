"""How a rule describes a fix: edits on syntax nodes, never on offsets.

A rule knows *what* to change (this expression, this statement) but not *where* it is in the file;
the engine turns these specs into character-offset :class:`~leaklint.findings.TextEdit` spans
(``leaklint.fix_edits``), checks that the span it is about to replace still reads as the node the
rule saw, and drops the fix rather than risk a wrong edit. Edits only ever touch the span they
name, so formatting, comments and line endings elsewhere are untouched.

The helpers at the bottom build the code snippets the rules need: ``x.detach()`` with the right
parentheses, and a reference to a torch attribute through whatever alias the file already uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

import libcst as cst

from leaklint.findings import Applicability

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts


@dataclass(frozen=True)
class Replace:
    """Replace the source of ``node`` (its own parentheses excluded) with ``code``."""

    node: cst.CSTNode
    code: str


@dataclass(frozen=True)
class Surround:
    """Put ``before`` and ``after`` around the source of ``node`` (``(a + b)`` → ``(a + b).detach()``).

    The node's own text is kept as it is in the file, so this works for expressions that span
    several lines, where regenerating the code would lose their continuation indentation.
    """

    node: cst.CSTNode
    before: str
    after: str


@dataclass(frozen=True)
class InsertLinesBefore:
    """Insert whole ``lines`` before the line ``anchor`` starts on, at that line's indentation."""

    anchor: cst.CSTNode
    lines: tuple[str, ...]


@dataclass(frozen=True)
class WrapInWith:
    """Wrap ``statement`` (a whole statement on its own lines) in ``with <header>:``, indenting it."""

    statement: cst.CSTNode
    header: str


@dataclass(frozen=True)
class UnwrapWith:
    """Replace a single-item ``with`` statement by its body, dedented one level."""

    statement: cst.With


@dataclass(frozen=True)
class RemoveStatement:
    """Delete a statement line; ``keep_pass`` leaves ``pass`` where the block would be empty."""

    statement: cst.SimpleStatementLine
    keep_pass: bool = False


@dataclass(frozen=True)
class RemoveArgument:
    """Delete ``argument`` from ``call`` with the comma that separates it, as text: the rest of
    the call (line breaks, indentation, comments) stays as written."""

    call: cst.Call
    argument: cst.Arg


@dataclass(frozen=True)
class AddDecorator:
    """Add ``@decorator`` directly above the ``def`` line (below existing decorators, so it wraps
    the plain function and ``@staticmethod``/``@property`` stay outermost)."""

    function: cst.FunctionDef
    decorator: str


EditSpec = Union[Replace, Surround, InsertLinesBefore, WrapInWith, UnwrapWith, RemoveStatement, RemoveArgument, AddDecorator]


@dataclass(frozen=True)
class SuggestedFix:
    """A fix as a rule proposes it: a title for reports, how safe it is, and the edits.

    ``imports`` lists modules the edits refer to by their plain name (``torch``) because the file
    binds no alias for them; the engine adds ``import torch`` once, after the file's imports.
    """

    title: str
    applicability: Applicability
    edits: tuple[EditSpec, ...]
    imports: tuple[str, ...] = ()


# --- snippets ---------------------------------------------------------------------------------
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float)


def bare_code(module: cst.Module, expression: cst.BaseExpression) -> str:
    """The expression's source without its own parentheses (the span the engine replaces)."""
    if getattr(expression, "lpar", None):
        expression = expression.with_changes(lpar=[], rpar=[])
    return module.code_for_node(expression)


def method_call(expression: cst.BaseExpression, method: str) -> Surround:
    """The edit ``expr`` → ``expr.method()``, parenthesising ``expr`` when it is not an atom."""
    if isinstance(expression, _ATOMS):
        return Surround(expression, "", f".{method}()")
    return Surround(expression, "(", f").{method}()")


def detach(expression: cst.BaseExpression) -> Surround:
    """The edit ``expr`` → ``expr.detach()``."""
    return method_call(expression, "detach")


def drop_argument(module: cst.Module, call: cst.Call, argument: cst.Arg) -> RemoveArgument:
    """The edit ``f(a, flag=True)`` → ``f(a)``, also when the call spans several lines."""
    if not any(arg is argument for arg in call.args):
        raise ValueError("the argument is not one of the call's")
    return RemoveArgument(call, argument)


@dataclass(frozen=True)
class TorchReference:
    """How to spell a torch attribute in this file, and whether ``import torch`` must be added."""

    code: str
    needs_import: bool

    @property
    def imports(self) -> tuple[str, ...]:
        return ("torch",) if self.needs_import else ()


def torch_reference(module: cst.Module, attribute: str) -> TorchReference:
    """``th.no_grad`` if the file does ``import torch as th``, ``no_grad`` after
    ``from torch import no_grad``, else ``torch.no_grad`` (adding ``import torch`` if needed).

    Only imports at module level count: an alias bound inside some function is not in scope
    where the fix goes.
    """
    aliases = module_level_imports(module)
    qualified = f"torch.{attribute}"
    exact = [local for local, target in aliases.items() if target == qualified]
    if exact:
        return TorchReference(sorted(exact)[0], False)
    modules = [local for local, target in aliases.items() if target == "torch"]
    if modules:
        chosen = "torch" if "torch" in modules else sorted(modules)[0]
        return TorchReference(f"{chosen}.{attribute}", False)
    return TorchReference(qualified, True)


def module_level_imports(module: cst.Module) -> dict[str, str]:
    """Local name → qualified name for the imports at the top level of ``module``."""
    bound: dict[str, str] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    full = _dotted(alias.name)
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        bound[alias.asname.name.value] = full
                    else:
                        head = full.split(".", 1)[0]
                        bound[head] = head
            elif isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
                if isinstance(small.names, cst.ImportStar):
                    continue
                base = _dotted(small.module)
                for alias in small.names:
                    name = _dotted(alias.name)
                    local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
                    bound[local] = f"{base}.{name}"
    return bound


def _dotted(node: cst.BaseExpression) -> str:
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
    return ".".join(reversed(parts))


# --- fixes several rules share ----------------------------------------------------------------
_LITERAL_CONTAINERS = (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def detach_fix(facts: ModuleFacts, expression: cst.BaseExpression) -> SuggestedFix | None:
    """``.detach()`` on the graph-attached part of ``expression`` (``0.1 * loss`` → ``0.1 * loss.detach()``).

    Safe when the value is known to be a tensor — a loss, something ``backward()`` is called on,
    or arithmetic on one — because detaching keeps its value, dtype and device. Unsafe when it may
    be a model output, which can be a tuple or a ``ModelOutput`` that has no ``.detach()``.
    None for literal containers (``[a, b]``): which element to detach is the user's call.
    """
    from leaklint.analysis.values import Evidence

    target = _graph_part(facts, expression)
    if target is None or isinstance(target, _LITERAL_CONTAINERS):
        return None
    value = facts.value(target)
    arithmetic = isinstance(target, (cst.BinaryOperation, cst.UnaryOperation))
    tensor_known = value.items is None and (value.evidence in (Evidence.BACKWARD, Evidence.LOSS) or arithmetic)
    applicability = Applicability.SAFE if tensor_known else Applicability.UNSAFE
    return SuggestedFix(f"Detach '{_short(bare_code(facts.module, target))}'", applicability, (detach(target),))


def _short(code: str, limit: int = 40) -> str:
    """One line of at most ``limit`` characters, for fix titles."""
    flat = " ".join(code.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _graph_part(facts: ModuleFacts, expression: cst.BaseExpression) -> cst.BaseExpression | None:
    """Descend through arithmetic to the one operand that carries the graph."""
    while isinstance(expression, (cst.BinaryOperation, cst.UnaryOperation)):
        operands = [expression.left, expression.right] if isinstance(expression, cst.BinaryOperation) else [expression.expression]
        graphs = [operand for operand in operands if facts.value(operand).is_graph]
        if len(graphs) != 1:
            break
        expression = graphs[0]
    return expression if facts.value(expression).is_graph else None
