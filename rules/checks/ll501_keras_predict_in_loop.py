"""How LL501 keras-predict-in-loop finds its violations: ``check`` and its helpers.

The rule itself (documentation, examples, gate and runtime repro) is
:mod:`leaklint.rules.ll501_keras_predict_in_loop`. Only files that pass the gate import this
module, and with it libcst and the analysis.
"""

from __future__ import annotations

from typing import Iterator

from leaklint.analysis import nodes as cst
from leaklint.analysis.calls import CallGraph, call_graph
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.keras import KerasEvidence, KerasModels, keras_models
from leaklint.analysis.names import dotted_name
from leaklint.analysis.places import Level, Place, loop_level, per_iteration_names
from leaklint.analysis.torch_api import TENSORFLOW_ROOTS
from leaklint.analysis.walk import dotted_names_in, walk
from leaklint.findings import Confidence
from leaklint.rule import Violation

#: An argument shaped like one sample: ``x[None]``, ``np.expand_dims(x, 0)``, ``x.reshape(1, -1)``, ``[x]``.
_SINGLE_ITEM_FUNCS = frozenset({"expand_dims", "newaxis", "array", "asarray", "reshape", "stack", "atleast_2d"})


def _looks_like_one_item(arg: cst.BaseExpression) -> bool:
    if isinstance(arg, cst.List) and len(arg.elements) == 1:
        return True
    for node in walk(arg):
        if isinstance(node, cst.Name) and node.value in ("None", "newaxis"):
            return True
        if isinstance(node, cst.Call):
            leaf = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
            if leaf in _SINGLE_ITEM_FUNCS:
                return True
    return False


def check(facts: ModuleFacts) -> Iterator[Violation]:
    """LL501's violations in one file (``KerasPredictInLoop.check``)."""
    if not facts.imports.imports_anything_from(*TENSORFLOW_ROOTS):
        return

    places = [p for p in facts.index.calls_named("predict") if isinstance(p.node.func, cst.Attribute)]  # type: ignore[attr-defined]
    if not places:
        return
    sites = call_graph(facts)
    models = keras_models(facts)
    for place in places:
        call = place.node
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
        found = _per_item(facts, models, sites, place, call)
        if found is None:
            continue
        confidence, where = found
        yield Violation(
            node=call,
            message=(
                f"'{facts.describe(call)}' runs Keras predict() {where}: each call builds a tf.data "
                "pipeline and, in many TensorFlow versions, leaks memory"
            ),
            confidence=confidence,
            statement=place.statement(),
        )


def _per_item(
    facts: ModuleFacts, models: KerasModels, sites: CallGraph, place: Place, call: cst.Call
) -> tuple[Confidence, str] | None:
    receiver = call.func.value  # type: ignore[attr-defined]
    evidence = models.expression(receiver, place)
    arguments = [a.value for a in call.args if a.keyword is None][:1]
    if not arguments:
        return None
    mentioned = dotted_names_in(arguments[0])
    one_item = _looks_like_one_item(arguments[0])
    for loop in reversed(place.loop_nodes):
        if not mentioned & per_iteration_names(facts, loop):
            continue
        if evidence is None or _refits(models, loop, dotted_name(receiver)):
            return None
        strong = one_item or loop_level(facts, loop) in (Level.STEP, Level.WEAK_STEP) or isinstance(loop, cst.While)
        confidence = evidence.confidence if strong else Confidence.MEDIUM
        return _weaker(confidence, evidence.confidence), "on every loop iteration"
    if place.loops:
        return None
    return _in_helper(facts, models, sites, place, receiver, mentioned, evidence)


def _in_helper(
    facts: ModuleFacts,
    models: KerasModels,
    sites: CallGraph,
    place: Place,
    receiver: cst.BaseExpression,
    mentioned: set[str],
    evidence: KerasEvidence | None,
) -> tuple[Confidence, str] | None:
    """``predict`` on a parameter-derived input in a function a loop calls."""
    info = place.function(facts)
    if info is None or not mentioned & set(info.params):
        return None
    name = dotted_name(receiver)
    if evidence is None and name in info.params:
        evidence = models.parameter(info, name, sites)  # type: ignore[arg-type]
    if evidence is None:
        return None
    for site in sites.places_of(info):
        if _site_per_item(facts, models, site):
            return _weaker(Confidence.MEDIUM, evidence.confidence), f"on every call of '{info.name}', which a loop calls"
    return None


def _site_per_item(facts: ModuleFacts, models: KerasModels, site: Place) -> bool:
    """A call of the helper in a loop, on inputs that change every iteration, with a model the
    loop does not rebuild or refit (one call per fold is one predict per model)."""
    mentioned = set().union(*(dotted_names_in(a.value) for a in site.node.args))  # type: ignore[attr-defined]
    for loop in reversed(site.loop_nodes):
        if mentioned & per_iteration_names(facts, loop):
            return not _refits(models, loop, None)
    return False


def _refits(models: KerasModels, loop: cst.CSTNode, receiver: str | None) -> bool:
    """The loop builds or trains the model it predicts with (any model when ``receiver`` is None):
    one predict per model, which is LL503's business."""
    for node in walk(loop.body if isinstance(loop, (cst.For, cst.While)) else loop):  # type: ignore[attr-defined]
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        fitting = isinstance(func, cst.Attribute) and func.attr.value in ("fit", "train_on_batch")
        if fitting and (receiver is None or dotted_name(func.value) == receiver):  # type: ignore[union-attr]
            return True
        if isinstance(func, (cst.Name, cst.Attribute)) and models.construction(node) is not None:
            return True
    return False


def _weaker(a: Confidence, b: Confidence) -> Confidence:
    return a if a <= b else b
