"""Guards that make code run once although its function runs again and again: a lazy creation
that keeps what it builds (``if self._op is None: self._op = ...``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from leaklint.analysis.names import dotted_name
from leaklint.analysis.structure import FunctionInfo, names_bound_in
from leaklint.analysis.syntax import subscript_base
from leaklint.analysis.walk import not_into_scopes, walk

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.places import Place


def lazily_built(facts: ModuleFacts, place: Place, function: FunctionInfo) -> bool:
    """In the branch of a guard that builds once and keeps the result: ``if self._op is None:
    self._op = ...``, ``if key not in self.cache: self.cache[key] = ...``, on something that
    outlives the call (an attribute, a global, module-level code); a local or a parameter
    (``if train_op is None: train_op = tf.no_op()``) is built again on every call."""
    local = set(function.params)
    scope = place.scope
    if isinstance(scope, cst.FunctionDef):
        local |= names_bound_in(scope.body)
    chain = place.chain
    for index in range(place.scope_index + 1, len(chain) - 1):
        parent, child = chain[index], chain[index + 1]
        if not isinstance(parent, cst.If) or child is parent.test:
            continue
        absent = absent_names(parent.test, child is parent.body)
        if not absent:
            continue
        assigned = names_bound_in(child) | {
            base for node in walk(child, into=not_into_scopes) if isinstance(node, cst.AssignTarget)
            for base in [subscript_base(node.target)] if base
        }
        for name in absent & assigned:
            if "." in name or function.node is None or name not in local:
                return True
    return False


def absent_names(test: cst.BaseExpression, held: bool) -> set[str]:
    """Names the branch (``held``: the body, else the ``else``) runs without: ``x is None``,
    ``not x``, ``k not in d`` (``d``), ``not hasattr(obj, "a")`` (``obj.a``)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return absent_names(test.expression, not held)
    if isinstance(test, cst.BooleanOperation):
        if (held and isinstance(test.operator, cst.And)) or (not held and isinstance(test.operator, cst.Or)):
            return absent_names(test.left, held) | absent_names(test.right, held)
        return set()
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        operator = comparison.operator
        if isinstance(operator, (cst.Is, cst.IsNot)) and isinstance(comparison.comparator, cst.Name) and comparison.comparator.value == "None":
            name = dotted_name(test.left)
            return {name} if name and held == isinstance(operator, cst.Is) else set()
        if isinstance(operator, (cst.In, cst.NotIn)):
            name = dotted_name(comparison.comparator)
            return {name} if name and held == isinstance(operator, cst.NotIn) else set()
        return set()
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "hasattr" and len(test.args) == 2:
        owner, attribute = dotted_name(test.args[0].value), test.args[1].value
        if owner and isinstance(attribute, cst.SimpleString) and not held:
            return {f"{owner}.{attribute.evaluated_value}"}
        return set()
    name = dotted_name(test)
    return {name} if name and not held else set()
