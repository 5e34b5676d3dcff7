"""Containers as the code builds them: the slot a store writes into (``self.stats[key]``), the
literal keys of a dict, and queues that keep only their last items (``deque(maxlen=20)``)."""

from __future__ import annotations

import weakref

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.names import ImportMap, dotted_name
from leaklint.analysis.walk import walk


#: ImportMap -> ClassDef -> its attributes that only ever hold a bounded queue (see
#: ``bounded_attributes``); one table per module (its ImportMap), like provenance's ``_SHARED_NAMES``.
_BOUNDED: weakref.WeakKeyDictionary[ImportMap, dict[cst.ClassDef, frozenset[str]]] = weakref.WeakKeyDictionary()


def _bounded_attributes_of(cls: cst.ClassDef, imports: ImportMap) -> frozenset[str]:
    assigned: dict[str, bool] = {}
    for node in walk(cls):
        if type(node) is not cst.Assign:
            continue
        for target in node.targets:  # type: ignore[attr-defined]
            name = dotted_name(target.target)
            if name is None or not name.startswith("self."):
                continue
            assigned[name] = assigned.get(name, True) and is_bounded_queue(node.value, imports)  # type: ignore[attr-defined]
    return frozenset(name for name, bounded in assigned.items() if bounded)


def is_bounded_queue(value: cst.BaseExpression, imports: ImportMap) -> bool:
    """``deque(maxlen=20)`` / ``deque([], 20)``: a queue that drops its oldest item when full."""
    return (
        type(value) is cst.Call
        and imports.resolve(value.func) in torch_api.BOUNDED_QUEUES  # type: ignore[attr-defined]
        and (len(value.args) >= 2 or any(a.keyword is not None and a.keyword.value == "maxlen" for a in value.args))  # type: ignore[attr-defined]
    )


def container_name(expr: cst.BaseExpression) -> str | None:
    """``self.stats`` in ``self.stats[key]``, ``self.stats[a][b]``, ``self.stats.setdefault(k, [])``:
    the object that holds what is stored in one of its slots."""
    while True:
        if type(expr) is cst.Subscript:
            expr = expr.value  # type: ignore[attr-defined]
        elif type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in ("setdefault", "get"):  # type: ignore[attr-defined]
            expr = expr.func.value  # type: ignore[attr-defined]
        else:
            return dotted_name(expr)


def literal_key(expr: cst.BaseExpression) -> object | None:
    """The key a literal subscript or dict key names (``"loss"``, ``0``), None for anything else."""
    if type(expr) is cst.SimpleString:
        return expr.evaluated_value  # type: ignore[attr-defined]
    if type(expr) is cst.Integer:
        return int(expr.value.replace("_", ""), 0)  # type: ignore[attr-defined]
    return None


def bounded_attributes(cls: cst.ClassDef, imports: ImportMap) -> frozenset[str]:
    """Attributes of ``cls`` that only ever hold a bounded queue (``self.window = deque(maxlen=20)``):
    appending to them keeps the last few items (computed once per class and module)."""
    cache = _BOUNDED.get(imports)
    if cache is None:
        cache = _BOUNDED[imports] = {}
    found = cache.get(cls)
    if found is None:
        found = cache[cls] = _bounded_attributes_of(cls, imports)
    return found
