"""How LL503 keras-model-in-loop finds its violations: ``check`` and its helpers.

The rule itself (documentation, examples, gate and runtime repro) is
:mod:`leaklint.rules.ll503_keras_model_in_loop`. Only files that pass the gate import this
module, and with it libcst and the analysis.
"""

from __future__ import annotations

from typing import Iterator

from leaklint.analysis import nodes as cst
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.keras import (
    KerasModels,
    is_keras_name,
    is_model_loader,
    keras_models,
)
from leaklint.analysis.names import dotted_name
from leaklint.analysis.places import COMPREHENSIONS, Place
from leaklint.analysis.structure import bound_names
from leaklint.analysis.torch_api import GC_COLLECT, TENSORFLOW_ROOTS
from leaklint.analysis.walk import calls_in, not_into_scopes, walk
from leaklint.findings import Confidence
from leaklint.rule import Violation

#: Methods that train or evaluate a model: the loop really uses the model it builds.
_TRAINING_METHODS = frozenset({"compile", "fit", "fit_generator", "train_on_batch", "evaluate"})
_STORING_METHODS = frozenset({"append", "extend", "insert", "add", "setdefault"})


def _is_clear_session(facts: ModuleFacts, call: cst.Call) -> bool:
    """``tf.keras.backend.clear_session()``, ``K.clear_session()``, ``keras.utils.clear_session()``."""
    qualified = facts.imports.resolve(call.func)
    return is_keras_name(qualified) and qualified.rsplit(".", 1)[-1] == "clear_session"  # type: ignore[union-attr]


def check(facts: ModuleFacts) -> Iterator[Violation]:
    """LL503's violations in one file (``KerasModelInLoop.check``)."""
    if not facts.imports.imports_anything_from(*TENSORFLOW_ROOTS):
        return

    models = keras_models(facts)

    reported_loops: set[cst.CSTNode] = set()
    for place in facts.index.ordered_calls:
        if not place.loops or models.construction(place.node) is None:  # type: ignore[arg-type]
            continue
        loop = place.loop_nodes[-1]
        if loop in reported_loops or isinstance(loop, COMPREHENSIONS):
            continue
        call = place.node
        assert isinstance(call, cst.Call)
        found = _judge(facts, models, place, loop, call)
        if found is None:
            continue
        reported_loops.add(loop)
        confidence, doing = found
        yield Violation(
            node=call,
            message=(
                f"'{facts.describe(call)}' {doing} a Keras model on every iteration without "
                "clear_session(): Keras's global state keeps every model's layers and grows each time"
            ),
            confidence=confidence,
            statement=place.statement(),
        )


def _judge(
    facts: ModuleFacts, models: KerasModels, place: Place, loop: cst.CSTNode, call: cst.Call
) -> tuple[Confidence, str] | None:
    """(confidence, "builds"/"loads") for a construction the loop does not clean up after."""
    body = loop.body  # type: ignore[attr-defined]
    calls = calls_in(body)
    if any(_is_clear_session(facts, c) or _helper_clears(facts, models, c) for c in calls):
        return None
    names = _bound_to(place)
    if names is None or any(_kept(node, names) for node in walk(body, into=not_into_scopes)):
        return None
    trained = any(
        isinstance(c.func, cst.Attribute) and c.func.attr.value in _TRAINING_METHODS and dotted_name(c.func.value) in names
        for c in calls
    ) or _builder_compiles(models, call)
    freed = any(facts.imports.resolve(c.func) == GC_COLLECT for c in calls) and any(
        isinstance(n, cst.Del) for n in walk(body, into=not_into_scopes)
    )
    doing = "loads" if is_model_loader(facts.imports.resolve(call.func)) else "builds"
    return (Confidence.HIGH if trained and not freed else Confidence.MEDIUM), doing


def _bound_to(place: Place) -> set[str] | None:
    """The names the new model is bound to; None when it goes straight into a container or an
    attribute (kept on purpose), an empty set when it is used without a name."""
    parent = place.parent
    if isinstance(parent, cst.Assign):
        names: set[str] = set()
        for target in parent.targets:
            if isinstance(target.target, (cst.Subscript, cst.Attribute)):
                return None
            names.update(bound_names(target.target))
        return names
    if isinstance(parent, (cst.Element, cst.DictElement, cst.Arg)):
        return None
    return set()


def _kept(node: cst.CSTNode, names: set[str]) -> bool:
    """``models.append(model)``, ``best[fold] = model``, ``self.models += [model]``: kept alive."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _STORING_METHODS:
        return any(dotted_name(a.value) in names for a in node.args)
    if isinstance(node, cst.Assign) and dotted_name(node.value) in names:
        return any(isinstance(t.target, (cst.Subscript, cst.Attribute)) for t in node.targets)
    if isinstance(node, cst.AugAssign) and isinstance(node.value, (cst.List, cst.Tuple)):
        return any(dotted_name(e.value) in names for e in node.value.elements)
    return False


def _helper_clears(facts: ModuleFacts, models: KerasModels, call: cst.Call) -> bool:
    """A local function (a builder, a reset helper) called in the loop clears the session."""
    func = call.func
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
    if name is None:
        return False
    definition = models.builders.get(name) or facts.structure.module_functions.get(name)
    if definition is None and isinstance(func, cst.Attribute) and dotted_name(func.value) in ("self", "cls"):
        definition = next(
            (c.methods[name] for c in facts.structure.classes.values() if name in c.methods), None
        )
    return definition is not None and any(_is_clear_session(facts, c) for c in calls_in(definition.body))


def _builder_compiles(models: KerasModels, call: cst.Call) -> bool:
    """The construction is a local builder that compiles the model before returning it."""
    func = call.func
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
    definition = models.builders.get(name) if name else None
    return definition is not None and any(
        isinstance(c.func, cst.Attribute) and c.func.attr.value == "compile" for c in calls_in(definition.body)
    )
