"""How LL502 tf-function-in-loop finds its violations: ``check`` and its helpers.

The rule itself (documentation, examples, gate and runtime repro) is
:mod:`leaklint.rules.ll502_tf_function_in_loop`. Only files that pass the gate import this
module, and with it libcst and the analysis.
"""

from __future__ import annotations

from typing import Iterator

from leaklint.analysis import nodes as cst
from leaklint.analysis.calls import CallGraph, call_graph
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.places import Level, Place, per_iteration_names, step_level
from leaklint.analysis.steps import is_per_step_hook
from leaklint.analysis.structure import FunctionInfo
from leaklint.analysis.torch_api import TENSORFLOW_ROOTS
from leaklint.analysis.walk import walk
from leaklint.findings import Confidence
from leaklint.rule import Violation

TF_FUNCTION = frozenset({"tensorflow.function", "tensorflow.compat.v2.function", "tensorflow.compat.v1.function"})
#: Methods that run once per object, not per step: a tf.function made there is made once.
_ONCE_METHODS = frozenset({"__init__", "__post_init__", "build", "setup", "on_fit_start", "on_train_start", "compile"})
_PER_STEP_LEVELS = (Level.STEP, Level.WEAK_STEP, Level.EPOCH)
_STORING_METHODS = frozenset({"append", "extend", "insert", "add", "setdefault", "update"})


def _is_tf_function(facts: ModuleFacts, expr: cst.BaseExpression) -> bool:
    """``tf.function`` or ``tf.function(...)`` used as a decorator or a wrapper."""
    if isinstance(expr, cst.Call):
        expr = expr.func
    return facts.imports.resolve(expr) in TF_FUNCTION


def _is_cache_guard(test: cst.BaseExpression) -> bool:
    """``if self._fn is None:`` / ``if key not in cache:`` / ``if not built:``: built once, lazily."""
    for node in walk(test):
        if isinstance(node, cst.Comparison) and any(
            isinstance(t.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for t in node.comparisons
        ):
            return True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            return True
    return False


def _stored(place: Place) -> bool:
    """The created function goes into a container or an attribute, to be kept and reused."""
    parent = place.parent
    if isinstance(parent, cst.Assign):
        return any(isinstance(t.target, (cst.Subscript, cst.Attribute)) for t in parent.targets)
    if isinstance(parent, (cst.Element, cst.DictElement)):
        return True
    if isinstance(parent, cst.Arg) and len(place.path) >= 2:
        call = place.path[-2]
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in _STORING_METHODS
    return False


def _wraps_loop_item(facts: ModuleFacts, place: Place) -> bool:
    """``for model in models: fn = tf.function(model)``: each iteration wraps a different callable,
    so a new function per iteration is needed (and the loop is not a training loop)."""
    call = place.node
    if not isinstance(call, cst.Call) or not call.args or call.args[0].keyword is not None:
        return False
    wrapped = dotted_name(call.args[0].value)
    if wrapped is None:
        return False
    head = wrapped.split(".", 1)[0]
    return any(head in per_iteration_names(facts, loop) for loop in place.loop_nodes)


def check(facts: ModuleFacts) -> Iterator[Violation]:
    """LL502's violations in one file (``TfFunctionInLoop.check``)."""
    if not facts.imports.imports_anything_from(*TENSORFLOW_ROOTS):
        return

    index = facts.index
    places = [
        p for p in index.calls_named("function") if facts.imports.resolve(p.node.func) in TF_FUNCTION  # type: ignore[attr-defined]
    ] + [
        p
        for p in index.decorated_with("function")
        if any(_is_tf_function(facts, d.decorator) for d in p.node.decorators)  # type: ignore[attr-defined]
    ]
    if not places:
        return
    sites = call_graph(facts)
    traced = {p.node for p in places if isinstance(p.node, cst.FunctionDef)}
    for place in places:
        if isinstance(place.parent, cst.Decorator):
            continue  # reported with its function definition
        found = _frequency(facts, sites, place, traced)
        if found is None:
            continue
        confidence, where = found
        node = place.node
        if isinstance(node, cst.FunctionDef):
            decorator = next(d.decorator for d in node.decorators if _is_tf_function(facts, d.decorator))
            what, report_at, statement = f"@{facts.describe(decorator)} def {node.name.value}", decorator, None
        else:
            what, report_at, statement = facts.describe(node), node, place.statement()
        yield Violation(
            node=report_at,
            message=(
                f"'{what}' creates a new tf.function {where}: each one traces its graph again "
                "and keeps its concrete functions alive"
            ),
            confidence=confidence,
            statement=statement,
        )


def _frequency(
    facts: ModuleFacts, sites: CallGraph, place: Place, traced: set[cst.CSTNode]
) -> tuple[Confidence, str] | None:
    if any(_is_cache_guard(test) for test in place.guards()):
        return None
    if any(node in traced for node in place.path):
        return None  # created while an enclosing tf.function traces: once
    level, _ = step_level(facts, place)
    if place.loops:
        if level in _PER_STEP_LEVELS:
            return Confidence.HIGH, "on every loop iteration"
        if level is Level.OUTER or _stored(place) or _wraps_loop_item(facts, place):
            return None
        return Confidence.MEDIUM, "on every loop iteration"
    info = place.function(facts)
    if info is None or info.name in _ONCE_METHODS:
        return None
    return _called_per_step(facts, sites, info)


def _called_per_step(facts: ModuleFacts, sites: CallGraph, info: FunctionInfo) -> tuple[Confidence, str] | None:
    if is_per_step_hook(info):
        return Confidence.MEDIUM, f"on every call of the per-batch hook '{info.name}'"
    for site in sites.places_of(info):
        if step_level(facts, site)[0] in _PER_STEP_LEVELS:
            return Confidence.MEDIUM, f"on every call of '{info.name}', which a training loop calls"
    return None
