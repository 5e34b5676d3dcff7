"""LL503 keras-model-in-loop: Keras models built in a loop without ``clear_session()``."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

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
from leaklint.analysis.torch_api import GC_COLLECT, TENSORFLOW_CODE, TENSORFLOW_ROOTS
from leaklint.analysis.walk import calls_in, not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import LOOPS
from leaklint.rule import Measured, Rule, Violation


class KerasModelInLoop(Rule):
    code = "LL503"
    name = "keras-model-in-loop"
    severity = Severity.LEAK
    summary = "Keras models are built in a loop without keras.backend.clear_session(), so Keras's global state keeps growing."
    help = "call tf.keras.backend.clear_session() at the start of each iteration, before building the model"
    needs = TENSORFLOW_CODE & LOOPS
    #: bench/realcode (true, false, debatable) and bench/leaks (true, false), stop 18.
    measured = Measured(realcode=(0, 0, 6), leaks=(2, 1))
    docs = """
## What it finds
A Keras model built or loaded inside a loop — `keras.Sequential([...])`, `keras.Model(inputs,
outputs)`, `tf.keras.models.load_model(...)`, `tf.keras.applications.*`, an instance of a local
`keras.Model` subclass, or a call of a local builder function that returns one — when nothing in
that loop calls `clear_session()` (`tf.keras.backend.clear_session()`, `keras.backend.clear_session()`,
`K.clear_session()`, `keras.utils.clear_session()`), directly, in a helper it calls, or in the
builder itself. High confidence when the loop also compiles, fits or evaluates the model (k-fold
cross-validation, hyper-parameter search); medium when it only builds or loads it.

It stays quiet when the models are kept on purpose — appended to a list, stored in a dict or an
attribute, built in a comprehension (an ensemble): clearing the session there would break them.

`del model; gc.collect()` in the loop is not taken as a fix: it frees the model object, not the
Keras global state (the graph that functional models are built in, the layer-name counters),
which is what `clear_session()` resets. Such loops are reported with medium confidence.

## Why it matters
Keras keeps global state to build functional models and to give layers unique names. Each model
built in a loop adds to it, and the previous models' layers stay reachable from it: memory grows
fold after fold, layer names keep growing (`dense_157`), and long searches run out of host or
device memory. The Keras documentation of `clear_session` describes exactly this loop: "If you
are creating many models in a loop, this global state will consume an increasing amount of memory
over time, and you may want to clear it."

## Example
```python
for fold, (train_idx, val_idx) in enumerate(kfold.split(X)):
    model = build_model()
    model.compile(optimizer="adam", loss="binary_crossentropy")
    model.fit(X[train_idx], y[train_idx], epochs=10)
```

## Use instead
```python
for fold, (train_idx, val_idx) in enumerate(kfold.split(X)):
    tf.keras.backend.clear_session()
    model = build_model()
    model.compile(optimizer="adam", loss="binary_crossentropy")
    model.fit(X[train_idx], y[train_idx], epochs=10)
```

## Fix safety
No automatic fix: `clear_session()` also invalidates models still in use, so whether and where
to call it (at the top of each iteration, after the results are saved) depends on what the loop
keeps.

## Known false positives
A model built in a loop but never compiled, fitted, evaluated or run there is low confidence: it is
as often a block of a bigger model assembled layer by layer (`keras.Sequential` per repeated
block) as a leak.
`clear_session()` also invalidates models built earlier in the same session: a loop that must
keep using an earlier model (a teacher built before the loop) cannot call it, and the growth may
be acceptable for a few iterations — suppress with `# noqa: LL503`. Some TensorFlow releases leak
across `fit()` calls even with `clear_session()`; that is a TensorFlow bug, not this pattern.

## References
- `tf.keras.backend.clear_session` ("If you are creating many models in a loop, this global state
  will consume an increasing amount of memory over time"):
  https://www.tensorflow.org/api_docs/python/tf/keras/backend/clear_session
- Keras maintainers recommending `clear_session()` when creating models in a loop (k-fold runs
  running out of memory): https://github.com/keras-team/keras/issues/2102
- Running out of memory while repeatedly creating models: https://github.com/keras-team/keras/issues/9345
- Memory growth when creating Keras models in a loop: https://github.com/tensorflow/tensorflow/issues/30324
- Runtime repro: `leaklint verify LL503` measures the leaky and the fixed loop body.
"""
    VALID = (
        """
import tensorflow as tf
for fold, (train_idx, val_idx) in enumerate(folds):
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(X[train_idx], y[train_idx])
""",
        # the builder clears the session itself
        """
from keras import backend as K
from keras.models import Sequential
from keras.layers import Dense
def build_model(units):
    K.clear_session()
    model = Sequential([Dense(units)])
    model.compile(optimizer="adam", loss="mse")
    return model
for units in (32, 64, 128):
    model = build_model(units)
    model.fit(X, y)
""",
        # an ensemble: the models are kept on purpose
        """
from tensorflow import keras
models = []
for seed in range(5):
    model = keras.Sequential([keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(X, y)
    models.append(model)
ensemble = [keras.models.load_model(p) for p in paths]
""",
        # one model, trained epoch by epoch
        """
from tensorflow import keras
model = keras.Sequential([keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
for epoch in range(10):
    model.fit(X, y, epochs=1)
""",
        # not Keras: a PyTorch model per fold
        """
import torch
import tensorflow as tf
for fold in range(5):
    model = torch.nn.Linear(3, 1)
    model.compile()
""",
    )
    INVALID = (
        """
import tensorflow as tf
def build_model():
    inputs = tf.keras.Input(shape=(16,))
    outputs = tf.keras.layers.Dense(1)(inputs)
    return tf.keras.Model(inputs, outputs)

for fold, (train_idx, val_idx) in enumerate(kfold.split(X)):
    model = build_model()  # expect: LL503
    model.compile(optimizer="adam", loss="binary_crossentropy")
    model.fit(X[train_idx], y[train_idx], epochs=10)
""",
        """
import gc
from tensorflow import keras
for lr in (1e-2, 1e-3, 1e-4):
    model = keras.Sequential([keras.layers.Dense(8), keras.layers.Dense(1)])  # expect: LL503
    model.compile(optimizer=keras.optimizers.Adam(lr), loss="mse")
    model.fit(X, y)
    del model
    gc.collect()
""",
        """
import tensorflow as tf
for path in checkpoints:
    model = tf.keras.models.load_model(path)  # expect: LL503
    scores.append(model.evaluate(X_test, y_test))
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A Keras model built every iteration without `clear_session()`, vs with it. What piles up is
        TensorFlow's native state (measured with TF 2.21 / Keras 3.15: ~215 KiB of C++ heap per model
        without `clear_session()`, ~4 KiB with it; Python objects grow ~2 KiB either way), so the
        meter is the C heap, not tracemalloc."""

        requires = ("tensorflow",)
        tensors = False
        host_meter = "heap"

        def _build(self):
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.Input((16,)), tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])
            model.compile(optimizer="adam", loss="mse")
            return model

        def leaky(self, ctx):
            self._build()

        def fixed(self, ctx):
            import tensorflow as tf
            tf.keras.backend.clear_session()
            self._build()


# --- detection ------------------------------------------------------------------------------------
#: Methods that train or evaluate a model: the loop really uses the model it builds.
_TRAINING_METHODS = frozenset({"compile", "fit", "fit_generator", "train_on_batch", "evaluate"})
_STORING_METHODS = frozenset({"append", "extend", "insert", "add", "setdefault"})


def _is_clear_session(facts: ModuleFacts, call: cst.Call) -> bool:
    """``tf.keras.backend.clear_session()``, ``K.clear_session()``, ``keras.utils.clear_session()``."""
    qualified = facts.imports.resolve(call.func)
    return is_keras_name(qualified) and qualified.rsplit(".", 1)[-1] == "clear_session"  # type: ignore[union-attr]


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
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
    if not trained:
        # Built but never compiled, fitted or run here: as often a block of a bigger model
        # assembled layer by layer (keras.Sequential per repeated block) as a leak.
        return Confidence.LOW, doing
    return (Confidence.MEDIUM if freed else Confidence.HIGH), doing


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
