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


def torch_reference(facts: ModuleFacts, attribute: str, scope: cst.CSTNode | None) -> TorchReference | None:
    """How to write ``torch.<attribute>`` in code that runs directly in ``scope`` (a function, a
    class body, or None for module level); None when there is no safe way.

    ``th.no_grad`` if the file does ``import torch as th``, ``no_grad`` after
    ``from torch import no_grad``, else ``torch.no_grad`` (adding ``import torch`` if needed).
    Only unconditional module-level imports count as they are: an alias bound inside some function
    is not in scope where the fix goes, and one a local name shadows in ``scope`` (a parameter
    called ``torch``, ``for torch in ...``, ``import numpy as torch``) is not torch there.
    An import under ``try:``/``if`` (an optional dependency) is used only where the code of
    ``scope`` itself already calls through it; otherwise there is no fix, since adding an
    unconditional ``import torch`` would defeat the guard.
    """
    module, imports = facts.module, facts.imports
    qualified = f"torch.{attribute}"

    def free(local: str) -> bool:
        return not imports.bound_in(local, scope)

    plain = module_level_imports(module)
    exact = sorted(local for local, target in plain.items() if target == qualified and free(local))
    if exact:
        return TorchReference(exact[0], False)
    modules = sorted((local != "torch", local) for local, target in plain.items() if target == "torch" and free(local))
    if modules:
        return TorchReference(f"{modules[0][1]}.{attribute}", False)
    guarded = conditional_module_imports(module)
    if guarded:
        used = _dotted_heads(scope) if isinstance(scope, (cst.FunctionDef, cst.Lambda)) else set()
        for local, target in sorted(guarded.items()):
            if local in used and free(local) and local not in plain:
                if target == qualified:
                    return TorchReference(local, False)
                if target == "torch":
                    return TorchReference(f"{local}.{attribute}", False)
        if any(target == "torch" or target.startswith("torch.") for target in guarded.values()):
            return None  # torch is optional here: never import it unconditionally
    if "torch" in plain or "torch" in guarded or not free("torch"):
        return None  # `torch` means something else in this file or at this place
    return TorchReference(qualified, True)


def _dotted_heads(function: cst.FunctionDef | cst.Lambda) -> set[str]:
    """Names the body of ``function`` uses as the head of an attribute chain (``th`` in ``th.cat(...)``)."""
    from leaklint.analysis.walk import walk

    heads: set[str] = set()
    for node in walk(function.body):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            heads.add(node.value.value)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            heads.add(node.func.value)  # `no_grad()` imported by name
    return heads


def conditional_module_imports(module: cst.Module) -> dict[str, str]:
    """Local name -> qualified name for module-level imports nested in ``try``/``if``/``with``
    (optional dependencies: ``try: import torch as th`` / ``except ImportError: th = None``)."""
    found: dict[str, str] = {}

    def scan(compound: cst.BaseCompoundStatement) -> None:
        for block in _blocks(compound):
            body = block.body  # type: ignore[attr-defined]
            lines = [body] if isinstance(body, cst.SimpleStatementSuite) else body.body
            for statement in lines:
                if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                    for local, target in _imports_of(statement).items():
                        found.setdefault(local, target)
                elif isinstance(statement, cst.BaseCompoundStatement) and not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                    scan(statement)

    for statement in module.body:
        if isinstance(statement, cst.BaseCompoundStatement) and not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            scan(statement)
    return found


def _blocks(statement: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes with a ``body`` (suite) that a compound statement holds: its own, ``else``,
    ``elif``, ``except`` and ``finally`` parts."""
    blocks: list[cst.CSTNode] = []
    pending: list[cst.CSTNode | None] = [statement]
    while pending:
        node = pending.pop()
        if node is None:
            continue
        if isinstance(getattr(node, "body", None), cst.BaseSuite):
            blocks.append(node)
        pending.extend(getattr(node, "handlers", ()) or ())
        for name in ("orelse", "finalbody"):
            pending.append(getattr(node, name, None))
    return blocks


def _imports_of(line: cst.SimpleStatementLine | cst.SimpleStatementSuite) -> dict[str, str]:
    bound: dict[str, str] = {}
    for small in line.body:
        bound.update(_import_bindings(small))
    return bound


def _import_bindings(small: cst.BaseSmallStatement) -> dict[str, str]:
    """Local name -> qualified name that one ``import`` / ``from ... import`` binds."""
    bound: dict[str, str] = {}
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
            return bound
        base = _dotted(small.module)
        for alias in small.names:
            name = _dotted(alias.name)
            local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
            bound[local] = f"{base}.{name}"
    return bound


def module_level_imports(module: cst.Module) -> dict[str, str]:
    """Local name → qualified name for the imports at the top level of ``module``."""
    bound: dict[str, str] = {}
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            bound.update(_imports_of(statement))
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
