"""Statements that keep a value in a container: ``c.append(v)``, ``c[k] = v``, ``c += [v]``, or a
tensor grown by concatenation, ``t = torch.cat([t, v])`` and its lazy start
``t = v if t is None else torch.cat([t, v])``.

Syntax plus import resolution, like :mod:`leaklint.analysis.accumulate`: which container (a dotted
name; ``d`` for ``d[k][j] = v`` and ``d.setdefault(k, []).append(v)``) keeps which expressions.
Whether that container outlives the loop is ``ModuleFacts.lifetime``'s question.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import libcst as cst

from leaklint.analysis.accumulate import CONCATENATIONS
from leaklint.analysis.containers import container_name
from leaklint.analysis.names import ImportMap, dotted_name, dotted_names_in, names_read
from leaklint.analysis.structure import bound_names
from leaklint.analysis.walk import walk

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.provenance import StatementFact

#: Container methods that keep an argument, and which positional argument.
STORING_METHODS = {"append": 0, "appendleft": 0, "add": 0, "extend": 0, "insert": 1, "put": 0}
#: Methods that empty a container in place.
CLEARING_METHODS = frozenset({"clear"})


def emptied(node: cst.BaseSmallStatement) -> set[str]:
    """The dotted names the statement empties or binds afresh: ``buf.clear()``, ``del buf`` /
    ``del buf[:]``, ``buf[:] = []``, ``buf = []`` (not a growing re-binding that reads it:
    ``buf = buf + [x]``, ``preds = torch.cat([preds, out])``)."""
    found: set[str] = set()
    kind = type(node)
    if kind is cst.Assign or (kind is cst.AnnAssign and node.value is not None):  # type: ignore[attr-defined]
        read = names_read(node.value)  # type: ignore[attr-defined]
        targets = [t.target for t in node.targets] if kind is cst.Assign else [node.target]  # type: ignore[attr-defined]
        for target in targets:
            if isinstance(target, cst.Subscript):
                if not _whole_slice(target):
                    continue  # cache[key] = v keeps one more entry
                target = target.value
            found.update(name for name in bound_names(target) if name not in read)
    elif kind is cst.Del:
        deleted = node.target  # type: ignore[attr-defined]
        for target in [e.value for e in deleted.elements] if isinstance(deleted, cst.Tuple) else [deleted]:
            name = dotted_name(target.value if isinstance(target, cst.Subscript) else target)
            if name:
                found.add(name)
    elif kind is cst.Expr and type(node.value) is cst.Call:  # type: ignore[attr-defined]
        func = node.value.func  # type: ignore[attr-defined]
        if isinstance(func, cst.Attribute) and func.attr.value in CLEARING_METHODS:
            name = dotted_name(func.value)
            if name:
                found.add(name)
    return found


def _whole_slice(target: cst.Subscript) -> bool:
    """``x[:]``: the whole sequence."""
    return (
        len(target.slice) == 1
        and isinstance(target.slice[0].slice, cst.Slice)
        and target.slice[0].slice.lower is None
        and target.slice[0].slice.upper is None
    )


@dataclass(frozen=True)
class Store:
    """``container`` keeps ``value`` (the expression as written: a literal keeps its elements)."""

    container: str
    value: cst.BaseExpression
    #: "append" (a list or set method, ``+= [v]``), "item" (``d[k] = v``) or "concat" (a grown tensor).
    kind: str


def stores(node: cst.BaseSmallStatement, imports: ImportMap) -> Iterator[Store]:
    """What the statement ``node`` keeps, and where."""
    kind = type(node)
    if kind is cst.Expr and type(node.value) is cst.Call:  # type: ignore[attr-defined]
        call: cst.Call = node.value  # type: ignore[attr-defined]
        if type(call.func) is cst.Attribute and call.func.attr.value in STORING_METHODS:  # type: ignore[attr-defined]
            position = STORING_METHODS[call.func.attr.value]  # type: ignore[attr-defined]
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            container = container_name(call.func.value)  # type: ignore[attr-defined]
            if container and len(positional) > position:
                yield Store(container, positional[position], "append")
    elif kind is cst.Assign:
        assign: cst.Assign = node  # type: ignore[assignment]
        for target in assign.targets:
            if type(target.target) is cst.Subscript and not constant_key(target.target) and not _sliced(target.target):  # type: ignore[arg-type]
                container = container_name(target.target)
                if container:
                    yield Store(container, assign.value, "item")
        if len(assign.targets) == 1:
            target_name = dotted_name(assign.targets[0].target)
            if target_name is None:
                return
            value = assign.value
            if type(value) is cst.BinaryOperation and type(value.operator) is cst.Add and dotted_name(value.left) == target_name:  # type: ignore[attr-defined]
                if type(value.right) in (cst.List, cst.Tuple):  # type: ignore[attr-defined]
                    yield Store(target_name, value.right, "append")  # type: ignore[attr-defined]
            grown = grown_part(value, target_name, imports)
            if grown is not None:
                yield Store(target_name, grown, "concat")
    elif kind is cst.AugAssign and type(node.operator) is cst.AddAssign:  # type: ignore[attr-defined]
        if type(node.value) in (cst.List, cst.Tuple):  # type: ignore[attr-defined]
            container = container_name(node.target)  # type: ignore[attr-defined]
            if container:
                yield Store(container, node.value, "append")  # type: ignore[attr-defined]


def grown_part(value: cst.BaseExpression, target: str, imports: ImportMap) -> cst.BaseExpression | None:
    """What ``target = value`` adds to ``target`` when it grows it by concatenation:
    ``torch.cat([target, v])`` adds ``v``, and so does the lazy start
    ``v if target is None else torch.cat([target, v])`` (either way round)."""
    if type(value) is cst.IfExp:
        for branch, start in ((value.orelse, value.body), (value.body, value.orelse)):  # type: ignore[attr-defined]
            part = grown_part(branch, target, imports)
            if part is not None and start.deep_equals(part):
                return part
        return None
    if type(value) is not cst.Call or not value.args:  # type: ignore[attr-defined]
        return None
    if imports.resolve(value.func) not in CONCATENATIONS:  # type: ignore[attr-defined]
        return None
    sequence = value.args[0].value  # type: ignore[attr-defined]
    if type(sequence) not in (cst.List, cst.Tuple):
        return None
    parts = [element.value for element in sequence.elements]  # type: ignore[attr-defined]
    others = [part for part in parts if dotted_name(part) != target]
    if len(others) != len(parts) - 1 or len(others) != 1:
        return None
    return others[0]


def constant_key(target: cst.Subscript) -> bool:
    """``stats["last"] = t`` overwrites one slot every iteration: one value kept, not a pile."""
    literals = (cst.SimpleString, cst.Integer, cst.Float, cst.ConcatenatedString)
    return all(
        isinstance(element.slice, cst.Index) and isinstance(element.slice.value, literals)
        for element in target.slice
    )


def _sliced(target: cst.Subscript) -> bool:
    """``buffer[i:j] = v`` writes into an existing sequence or tensor: it keeps no new entry."""
    return any(isinstance(element.slice, cst.Slice) for element in target.slice)


def overwrites(facts: ModuleFacts, fact: StatementFact, store: Store) -> bool:
    """An item store (``c[k] = v``) that writes into a slot that exists already, so the container
    does not grow: ``d[k] = d[k].to(device)``, ``for k in d: d[k] = ...``, or an indexed write
    into a tensor allocated once (``preds[i] = out``, ``self.memory[idx] = m`` into a buffer)."""
    node = fact.node
    if store.kind != "item" or not isinstance(node, cst.Assign):
        return False
    held = fact.env.get(store.container)
    if held is not None and held.is_plain_tensor:
        return True
    for target in node.targets:
        slot = target.target
        if not isinstance(slot, cst.Subscript) or container_name(slot) != store.container:
            continue
        written = facts.value(slot.value)
        if held is None and written.is_plain_tensor:
            return True  # a tensor (self.memory, a registered buffer): an in-place write into it
        if any(isinstance(part, cst.Subscript) and part.deep_equals(slot) for part in walk(store.value)):
            return True
        keys = names_read(slot.slice[0].slice) if len(slot.slice) == 1 and isinstance(slot.slice[0].slice, cst.Index) else set()
        for loop in fact.loops:
            header = loop.node
            if isinstance(header, cst.For) and keys & set(bound_names(header.target)) and store.container in dotted_names_in(header.iter):
                return True  # for key in d: d[key] = ...
    return False
