"""How a rule describes a fix: edits on syntax nodes, never on offsets.

A rule knows *what* to change (this expression, this statement) but not *where* it is in the file;
the engine turns these specs into character-offset :class:`~leaklint.findings.TextEdit` spans
(``leaklint.fixes.edits``), checks that the span it is about to replace still reads as the node the
rule saw, and drops the fix rather than risk a wrong edit. Edits only ever touch the span they
name, so formatting, comments and line endings elsewhere are untouched.

The helpers at the bottom build the code snippets the rules need: ``x.detach()`` with the right
parentheses, and a reference to a torch attribute through whatever alias the file already uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

import libcst as cst
from leaklint.findings import Applicability, Confidence

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


def add_keyword(module: cst.Module, call: cst.Call, keyword: str, value: str) -> Replace:
    """``f(a, b)`` → ``f(a, b, keyword=value)``: the call's own layout kept, the argument appended."""
    argument = cst.Arg(
        value=cst.parse_expression(value),
        keyword=cst.Name(keyword),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    return Replace(call, bare_code(module, call.with_changes(args=(*call.args, argument))))


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
    unconditional ``import torch`` would defeat the guard — unless the file also imports from
    torch unconditionally (``from torch import nn``), so torch is required anyway.
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
        required = any(_is_torch(target) for target in plain.values())  # `from torch import nn` at the top
        if not required and any(_is_torch(target) for target in guarded.values()):
            return None  # torch is optional here: never import it unconditionally
    if plain.get("torch", "torch") != "torch" or guarded.get("torch", "torch") != "torch" or not free("torch"):
        return None  # `torch` means something else in this file or at this place
    return TorchReference(qualified, True)


def _is_torch(qualified: str) -> bool:
    return qualified == "torch" or qualified.startswith("torch.")


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

#: Tensor methods that return a tensor like their receiver (``loss.mean()``): a safe fix may
#: detach their result. Methods that can return tuples or numbers (``max``, ``split``, ``item``)
#: are not listed.
_TENSOR_TO_TENSOR_METHODS = frozenset(
    {
        "mean", "sum", "float", "double", "half", "bfloat16", "to", "cpu", "cuda", "clone", "abs", "pow",
        "sqrt", "exp", "log", "neg", "square", "squeeze", "unsqueeze", "view", "reshape", "flatten",
        "contiguous", "mul", "add", "sub", "div", "prod", "norm", "clamp", "type_as", "view_as",
    }
)


def detach_fix(facts: ModuleFacts, expression: cst.BaseExpression, *, mapping_hint: bool = False) -> SuggestedFix | None:
    """``.detach()`` on the graph-attached part of ``expression`` (``0.1 * loss`` → ``0.1 * loss.detach()``,
    ``loss if x else None`` → ``loss.detach() if x else None``).

    Safe when the value is known to be a tensor — a loss, something ``backward()`` is called on,
    or arithmetic on one — because detaching keeps its value, dtype and device. Unsafe when it may
    be a model output, which can be a tuple or a ``ModelOutput`` that has no ``.detach()``, or when
    the file indexes or iterates over it. None for literal containers (``[a, b]``): which element
    to detach is the user's call; and None for a value the file uses as a mapping (``d["ce"]``,
    ``d.items()``), which has no ``.detach()`` — with ``mapping_hint``, a display-only
    ``{k: v.detach() for k, v in d.items()}`` instead.
    """
    return detach_each_fix(facts, [expression], mapping_hint=mapping_hint)


def detach_each_fix(facts: ModuleFacts, expressions: list[cst.BaseExpression], *, mapping_hint: bool = False) -> SuggestedFix | None:
    """One fix that detaches every one of ``expressions`` (the graph elements of ``[loss, loss * 2]``);
    None if any of them cannot be detached, since the fix would then leave a graph behind."""
    targets: list[cst.BaseExpression] = []
    for expression in expressions:
        parts = _graph_parts(facts, expression)
        if not parts:
            return None
        targets.extend(parts)
    usage = facts.derived(container_usage)
    if any(isinstance(target, _LITERAL_CONTAINERS) for target in targets):
        return None
    if any(facts.value(target).items is not None or facts.value(target).fields is not None for target in targets):
        return None  # a tuple, list or dict (a helper returning ``[pooled, boxes]``): it has no .detach()
    mappings = [target for target in targets if usage.get(_dotted_or_none(target) or "") == MAPPING]
    if mappings:
        if not (mapping_hint and len(targets) == 1):
            return None
        code = bare_code(facts.module, targets[0])
        return SuggestedFix(
            f"Detach every value of '{_short(code)}'",
            Applicability.DISPLAY_ONLY,
            (Replace(targets[0], f"{{k: v.detach() for k, v in {code}.items()}}"),),
        )
    safe = all(_tensor_known(facts, target, usage) for target in targets)
    names = " and ".join(dict.fromkeys(f"'{_short(bare_code(facts.module, target))}'" for target in targets))
    return SuggestedFix(
        f"Detach {names}", Applicability.SAFE if safe else Applicability.UNSAFE, tuple(detach(target) for target in targets)
    )


def _short(code: str, limit: int = 40) -> str:
    """One line of at most ``limit`` characters, for fix titles."""
    flat = " ".join(code.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _graph_parts(facts: ModuleFacts, expression: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The sub-expressions to detach so that ``expression`` carries no graph: through arithmetic to
    the one operand that carries it, and into both branches of ``a if c else b`` / ``a or b``
    (detaching the whole would call ``.detach()`` on ``None`` or ``0`` when the other branch is taken)."""
    if isinstance(expression, (cst.IfExp, cst.BooleanOperation)):
        branches = [expression.body, expression.orelse] if isinstance(expression, cst.IfExp) else [expression.left, expression.right]
        parts: list[cst.BaseExpression] = []
        for branch in branches:
            if facts.value(branch).is_graph:
                found = _graph_parts(facts, branch)
                if not found:
                    return []
                parts.extend(found)
        return parts
    if isinstance(expression, (cst.BinaryOperation, cst.UnaryOperation)):
        operands = [expression.left, expression.right] if isinstance(expression, cst.BinaryOperation) else [expression.expression]
        graphs = [operand for operand in operands if facts.value(operand).is_graph]
        if len(graphs) == 1:
            return _graph_parts(facts, graphs[0])
    return [expression] if facts.value(expression).is_graph else []


def _tensor_known(facts: ModuleFacts, target: cst.BaseExpression, usage: dict[str, str]) -> bool:
    """Whether ``target`` is surely a tensor (so ``.detach()`` cannot fail on it)."""
    from leaklint.analysis.values import Evidence

    if isinstance(target, (cst.BinaryOperation, cst.UnaryOperation)):
        # Arithmetic with a tensor operand gives a tensor; on unknown values it may be `list + list`.
        operands = [target.left, target.right] if isinstance(target, cst.BinaryOperation) else [target.expression]
        return any(facts.value(operand).is_graph and _tensor_known(facts, operand, usage) for operand in operands)
    if isinstance(target, cst.Subscript):
        return _tensor_known(facts, target.value, usage) and all(isinstance(e.slice, cst.Slice) for e in target.slice)
    if isinstance(target, cst.Call):
        func = target.func
        if isinstance(func, cst.Attribute) and func.attr.value in _TENSOR_TO_TENSOR_METHODS:
            return _tensor_known(facts, func.value, usage)
        # A torch loss (`F.mse_loss(...)`, an `nn.*Loss()` instance) returns a tensor; a callable
        # that is a loss function only by its name may return a dict (DETR's `SetCriterion`).
        from leaklint.analysis.values import Role

        value = facts.value(target)
        if value.items is not None or value.evidence not in (Evidence.BACKWARD, Evidence.LOSS):
            return False
        callee = facts.value(func)
        known_loss_object = callee.role is Role.LOSS_FN and callee.confidence is Confidence.HIGH
        return (facts.imports.resolve(func) or "").startswith("torch.") or known_loss_object
    dotted = _dotted_or_none(target)
    if dotted is None:
        return False
    value = facts.value(target)
    return value.items is None and value.evidence in (Evidence.BACKWARD, Evidence.LOSS) and dotted not in usage


def _dotted_or_none(node: cst.BaseExpression) -> str | None:
    from leaklint.analysis.names import dotted_name

    return dotted_name(node)


#: How the file uses a name, as :func:`container_usage` reports it.
MAPPING = "mapping"
CONTAINER = "container"
_MAPPING_METHODS = frozenset({"keys", "items", "values", "get", "setdefault", "update", "popitem"})
_SEQUENCE_METHODS = frozenset({"append", "extend", "insert", "index", "count", "remove"})
_ITERATING_CALLS = frozenset({"len", "list", "tuple", "dict", "set", "sorted", "enumerate", "zip", "iter", "reversed", "map", "filter"})


def container_usage(facts: ModuleFacts) -> dict[str, str]:
    """Dotted names the file uses like a mapping (``d["ce"]``, ``d.items()``, ``**d``) or like
    another container (``d[k]``, ``for v in d``, ``len(d)``, ``a, b = d``), anywhere in the file.

    ``loss_dict = criterion(out, y)`` looks like a loss by its source, but if the file reads
    ``loss_dict["ce"]`` it is a dict, and ``loss_dict.detach()`` would raise. Tensor slicing
    (``x[:, 0]``, ``x[..., 1:]``) does not count.
    """
    from leaklint.analysis.names import dotted_name
    from leaklint.analysis.walk import walk

    found: dict[str, str] = {}

    def note(node: cst.BaseExpression, how: str) -> None:
        name = dotted_name(node)
        if name is not None and found.get(name) != MAPPING:
            found[name] = how

    for node in walk(facts.module):
        if isinstance(node, cst.Subscript):
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                key = node.slice[0].slice.value
                if isinstance(key, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
                    note(node.value, MAPPING)
                elif not isinstance(key, (cst.Ellipsis, cst.Tuple)) and not (isinstance(key, cst.Name) and key.value == "None"):
                    note(node.value, CONTAINER)
        elif isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute):
                if func.attr.value in _MAPPING_METHODS:
                    note(func.value, MAPPING)
                elif func.attr.value in _SEQUENCE_METHODS:
                    note(func.value, CONTAINER)
            elif isinstance(func, cst.Name) and func.value in _ITERATING_CALLS:
                for arg in node.args:
                    note(arg.value, CONTAINER)
            for arg in node.args:
                if arg.star == "**":
                    note(arg.value, MAPPING)
                elif arg.star == "*":
                    note(arg.value, CONTAINER)
        elif isinstance(node, (cst.For, cst.CompFor)):
            note(node.iter, CONTAINER)
        elif isinstance(node, cst.Assign) and any(isinstance(t.target, (cst.Tuple, cst.List)) for t in node.targets):
            note(node.value, CONTAINER)
        elif isinstance(node, cst.StarredDictElement):
            note(node.value, MAPPING)
        elif isinstance(node, cst.StarredElement):
            note(node.value, CONTAINER)
    return found
