"""Statements that add into a value kept across iterations, and statements that grow a tensor.

Two rules meet here and must not both claim a statement: LL101 reports an accumulation
(``total += loss``, ``avg = 0.9 * avg + 0.1 * loss``, ``total = torch.add(total, loss)``,
``total.add_(loss)``), LL102 a tensor grown by concatenation (``preds = torch.cat([preds, out])``),
and LL103 a state whose old value is an *input* of the next computation. The carry scan asks this
module whether a binding is only an accumulation or a concatenation, so LL103 leaves those to
LL101 and LL102; LL101 and LL102 ask it what is added or appended. One definition, three rules.

Everything here is syntax plus import resolution: no values, no flow.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from leaklint.analysis.names import ImportMap, dotted_name, dotted_names_in
from leaklint.analysis.syntax import subscript_base

#: ``torch.add(total, loss)``: functions whose result is their first argument plus (minus) the second.
_ADDING_FUNCTIONS = {"torch.add": True, "torch.sub": False, "torch.subtract": False}
#: ``total.add(loss)`` / ``total.add_(loss)``: methods that add their argument to the receiver.
_ADDING_METHODS = frozenset({"add", "sub", "subtract"})
_IN_PLACE_ADDING_METHODS = frozenset({"add_", "sub_", "subtract_"})
#: ``preds = torch.cat([preds, out])``: the tensor itself becomes the growing container.
CONCATENATIONS = frozenset(
    {"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack", "torch.hstack", "torch.row_stack"}
)


@dataclass(frozen=True)
class Accumulation:
    """``target`` gets ``terms`` added to what it already holds."""

    #: The accumulator: a dotted name, or the container of a slot (``stats`` for ``stats["loss"]``).
    target: str
    #: The expressions added in (``loss`` in ``avg = 0.9 * avg + 0.1 * loss`` is inside ``0.1 * loss``).
    terms: tuple[cst.BaseExpression, ...]
    #: ``total.add_(loss)``: the accumulator is updated in place.
    in_place: bool = False


def accumulation(node: cst.CSTNode, imports: ImportMap) -> Accumulation | None:
    """The accumulation ``node`` performs, if it is one: ``t += x``, ``t -= x``, ``t = t + x``,
    ``t = 0.9 * t + 0.1 * x``, ``t = torch.add(t, x)``, ``t = t.add(x)``, ``t = sum([t, x])``,
    ``t.add_(x)``, ``t = x if t is None else t + x``, also into a slot (``d["k"] += x``,
    ``d["k"] = d.get("k", 0) + x``).

    Not an accumulation: ``lst += [x]`` (a list extended: LL102), ``t = f(t, x)`` for any other
    ``f``, or an update that reads ``t`` other than as its running value (``t = t * x + t``)."""
    if isinstance(node, cst.AugAssign):
        if not isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
            return None
        if isinstance(node.value, (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp)):
            return None
        target = dotted_name(node.target) or subscript_base(node.target)
        return Accumulation(target, (node.value,)) if target else None
    if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
        call = node.value
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _IN_PLACE_ADDING_METHODS:
            target = dotted_name(func.value) or subscript_base(func.value)
            terms = _positional(call)[:1]
            if target and terms and not _reads(terms[0], target):
                return Accumulation(target, tuple(terms), in_place=True)
        return None
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        slot = node.targets[0].target
        target = dotted_name(slot) or (subscript_base(slot) if isinstance(slot, cst.Subscript) else None)
        if target is None:
            return None
        terms = _added_terms(node.value, slot, target, imports)
        return Accumulation(target, tuple(terms)) if terms else None
    return None


def _added_terms(value: cst.BaseExpression, slot: cst.BaseExpression, target: str, imports: ImportMap) -> list[cst.BaseExpression] | None:
    if isinstance(value, cst.IfExp):
        # `avg = loss if avg is None else 0.9 * avg + 0.1 * loss`: a lazy start, then an average
        for branch, start in ((value.body, value.orelse), (value.orelse, value.body)):
            terms = _added_terms(branch, slot, target, imports)
            if terms and not _reads(start, target):
                return [*terms, start]
        return None
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract)):
        terms = _flatten_sum(value)
        running = [term for term in terms if _is_running(term, slot) or _is_decayed(term, slot, target)]
        added = [term for term in terms if not any(term is r for r in running)]
        if len(running) != 1 or not added or any(_reads(term, target) for term in added):
            return None
        return added
    if not isinstance(value, cst.Call):
        return None
    func = value.func
    args = _positional(value)
    qualified = imports.resolve(func)
    if qualified in _ADDING_FUNCTIONS and len(args) == 2:
        first, second = args
        if _is_running(first, slot) and not _reads(second, target):
            return [second]
        if _ADDING_FUNCTIONS[qualified] and _is_running(second, slot) and not _reads(first, target):
            return [first]
        return None
    if isinstance(func, cst.Attribute) and func.attr.value in _ADDING_METHODS and _is_running(func.value, slot):
        return args[:1] if len(args) >= 1 and not _reads(args[0], target) else None
    if isinstance(func, cst.Name) and func.value == "sum" and qualified is None and len(value.args) == 1:
        sequence = value.args[0].value
        if isinstance(sequence, (cst.List, cst.Tuple)):
            parts = [element.value for element in sequence.elements]
            running = [part for part in parts if _is_running(part, slot)]
            added = [part for part in parts if not any(part is r for r in running)]
            if len(running) == 1 and added and not any(_reads(part, target) for part in added):
                return added
    return None


def _flatten_sum(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        return _flatten_sum(expr.left) + _flatten_sum(expr.right)
    return [expr]


def _positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [arg.value for arg in call.args if arg.keyword is None and not arg.star]


#: ``total.to(loss.device)``: the same running value, moved or cast (``detach`` is not: it cuts
#: the running value off its graph, so nothing chains).
_MOVES = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "type", "type_as"})


def _is_running(expr: cst.BaseExpression, slot: cst.BaseExpression) -> bool:
    """``expr`` reads the accumulator's running value: the same name, the same slot
    (``d["k"]``), or ``d.get("k", default)`` for the slot ``d["k"]``; also moved to a device or
    cast (``self.total.to(loss.device)``)."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _MOVES:
        expr = expr.func.value
    if not isinstance(slot, cst.Subscript):
        name = dotted_name(slot)
        return name is not None and dotted_name(expr) == name
    if isinstance(expr, cst.Subscript):
        return expr.deep_equals(slot)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "get":
        base = dotted_name(slot.value)
        key = slot.slice[0].slice if len(slot.slice) == 1 else None
        args = _positional(expr)
        return (
            base is not None
            and dotted_name(expr.func.value) == base
            and isinstance(key, cst.Index)
            and bool(args)
            and args[0].deep_equals(key.value)
        )
    return False


def _is_decayed(term: cst.BaseExpression, slot: cst.BaseExpression, target: str) -> bool:
    """``0.9 * avg`` / ``avg * decay`` / ``avg / 2``: the running value scaled (an average)."""
    if not isinstance(term, cst.BinaryOperation) or not isinstance(term.operator, (cst.Multiply, cst.Divide)):
        return False
    left, right = term.left, term.right
    if _is_running(left, slot):
        return not _reads(right, target)
    return isinstance(term.operator, cst.Multiply) and _is_running(right, slot) and not _reads(left, target)


def _reads(expr: cst.BaseExpression, target: str) -> bool:
    return target in dotted_names_in(expr)


def grown_tensor(node: cst.CSTNode, imports: ImportMap) -> tuple[str, list[cst.BaseExpression]] | None:
    """``preds = torch.cat([preds, out])``: (the growing tensor's name, what each step adds)."""
    if not isinstance(node, cst.Assign) or len(node.targets) != 1:
        return None
    target = dotted_name(node.targets[0].target)
    value = node.value
    if target is None or not isinstance(value, cst.Call) or not value.args:
        return None
    if imports.resolve(value.func) not in CONCATENATIONS:
        return None
    sequence = value.args[0].value
    if not isinstance(sequence, (cst.List, cst.Tuple)):
        return None
    parts = [element.value for element in sequence.elements]
    if not any(dotted_name(part) == target for part in parts):
        return None
    return target, [part for part in parts if dotted_name(part) != target]
