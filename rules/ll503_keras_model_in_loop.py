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
    TRIAL_RUNNERS,
    per_trial_functions,
)
from leaklint.analysis.names import dotted_name
from leaklint.analysis.places import COMPREHENSIONS, Place
from leaklint.analysis.structure import FunctionInfo, bound_names
from leaklint.analysis.iterations import few_runs
from leaklint.analysis.tensorflow import tf_graph
from leaklint.analysis.torch_api import GC_COLLECT, TENSORFLOW_CODE, TENSORFLOW_ROOTS
from leaklint.analysis.walk import calls_in, not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import LOOPS, Names
from leaklint.rule import Measured, Rule, Violation


class KerasModelInLoop(Rule):
    code = "LL503"
    name = "keras-model-in-loop"
    severity = Severity.LEAK
    summary = "Keras models are built in a loop without keras.backend.clear_session(), so Keras's global state keeps growing."
    help = "call tf.keras.backend.clear_session() at the start of each iteration, before building the model"
    #: A loop, or a hyper-parameter search that calls an objective per trial.
    needs = TENSORFLOW_CODE & (LOOPS | Names("optimize", *(api.rsplit(".", 1)[-1] for api in TRIAL_RUNNERS)))
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(5, 0, 3), leaks=(13, 1))
    docs = """
## What it finds
A Keras model built or loaded again and again — `keras.Sequential([...])`, `keras.Model(inputs,
outputs)`, `tf.keras.models.load_model(...)`, `model_from_json(...)`, `tf.keras.applications.*`,
an instance of a local `keras.Model` subclass, or a call of a local builder function that returns
one — when nothing calls `clear_session()` (`tf.keras.backend.clear_session()`,
`keras.backend.clear_session()`, `K.clear_session()`, `keras.utils.clear_session()`) there,
directly, in a helper, or in the builder itself. Again and again means:

- inside a loop (a k-fold, a sweep over architectures, a continuous evaluation of checkpoints);
  when the loop calls a local builder, the finding points at the construction inside the
  builder, the line that creates what leaks;
- in a function that a loop calls (through an object too: `net.load(...)` replacing
  `self.model` per reload), or that a search calls once per trial (an Optuna objective given
  to `study.optimize`, a hyperopt / scikit-optimize / Ray Tune objective; a function or a method
  of the caller's class, `fmin(self.objective, ...)`).

It also finds the same model compiled again and again: `model.compile(...)` inside a loop on a
model built once before it (`for episode ...: model.compile(loss=make_loss(...)); model.fit(...)`).
Every compile makes a new optimizer, new metrics and a new training function for the model, and
what the earlier compiles made is not released; fit() gets slower and memory climbs update after
update. High confidence when the loop also trains the model, medium otherwise, low when the loops
run at most five times (fine-tuning in two or three stages); a loop that rebuilds the model or
calls `clear_session()` is judged as a construction instead.

High confidence when the model is also compiled, fitted or evaluated there, medium when it is only
built or loaded, low when it is only built (as often a block of a bigger model assembled layer
by layer) and when the loops run at most five times in all (a 4-fold cross-validation: bounded).

It stays quiet when the models are kept on purpose — appended to a list, stored in a dict, built
in a comprehension (an ensemble), or returned to a loop that keeps them: clearing the session
there would break them. KerasTuner hypermodels are not reported: the tuners call
`keras.backend.clear_session()` before building each trial's model.

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
block) as a leak. Loops of a handful of iterations (`k = 4` folds, five values of a parameter)
are low confidence too: the growth is bounded (on bench/realcode: the 4-fold cross-validations of
*Deep Learning with Python*, a five-value compression sweep, and model blocks built per layer).
`clear_session()` also invalidates models built earlier in the same session: a loop that must
keep using an earlier model (a teacher built before the loop) cannot call it, and the growth may
be acceptable for a few iterations — suppress with `# noqa: LL503`. Some TensorFlow releases leak
across `fit()` calls even with `clear_session()`; that is a TensorFlow bug, not this pattern.
A `compile()` per iteration whose loop runs a handful of times (fine-tuning in stages, a few
learning rates) is low confidence.

On bench/realcode the findings at the default confidence are course notebooks that build, compile
and fit a new model per round without `clear_session()`: bootstraps of 50 or 100 rounds, a
training loop rerun until a small network converges, a sweep over ten window sizes. Debatable:
a 5-fold cross-validation of small models, bounded growth that leaklint does not read from the
`KFold` object. A hyperparameter search whose model builder calls `clear_session()` itself was
reported at first and is fixed. The recompile check finds nothing there.

## References
- `tf.keras.backend.clear_session` ("If you are creating many models in a loop, this global state
  will consume an increasing amount of memory over time"):
  https://www.tensorflow.org/api_docs/python/tf/keras/backend/clear_session
- Keras maintainers recommending `clear_session()` when creating models in a loop (k-fold runs
  running out of memory): https://github.com/keras-team/keras/issues/2102
- Running out of memory while repeatedly creating models: https://github.com/keras-team/keras/issues/9345
- Memory growth when creating Keras models in a loop: https://github.com/tensorflow/tensorflow/issues/30324
- `fit()` slower and slower when the same model is recompiled before each call (an online learner):
  https://github.com/tensorflow/tensorflow/issues/25073
- Memory growing with every `compile()` of the same model: https://github.com/tensorflow/tensorflow/issues/26108
- Runtime repro: `leaklint verify LL503` measures the leaky and the fixed loop body.
"""
    VALID = (
        # a bootstrap of SPLITS = 2 rounds, the splitter built in the function that loops over
        # it: two models per call (low confidence only)
        """
import tensorflow as tf
from sklearn.model_selection import StratifiedShuffleSplit

SPLITS = 2

def build(units):
    model = tf.keras.Sequential([tf.keras.layers.Dense(units, activation="relu"), tf.keras.layers.Dense(3)])
    model.compile(optimizer="adam", loss="categorical_crossentropy")
    return model

def evaluate(x, y, labels, units):
    boot = StratifiedShuffleSplit(n_splits=SPLITS, test_size=0.1)
    scores = []
    for train, test in boot.split(x, labels):
        model = build(units)
        model.fit(x[train], y[train], epochs=50, verbose=0)
        scores.append(model.evaluate(x[test], y[test], verbose=0))
    return sum(scores) / len(scores)
""",
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
        # a KerasTuner hypermodel: the tuner clears the session before each build
        """
import keras_tuner as kt
import tensorflow as tf
def build(hp):
    model = tf.keras.Sequential([tf.keras.layers.Dense(hp.Int("units", 8, 64))])
    model.compile(optimizer="adam", loss="mse")
    return model
tuner = kt.RandomSearch(build, objective="val_loss", max_trials=50)
""",
        # an Optuna objective that clears the session itself
        """
import optuna
import tensorflow as tf
def objective(trial):
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential([tf.keras.layers.Dense(trial.suggest_int("units", 8, 64))])
    model.compile(optimizer="adam", loss="mse")
    return model.fit(x, y).history["loss"][-1]
optuna.create_study().optimize(objective, n_trials=100)
""",
        # compiled once, before the loop that trains it
        """
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
for step in range(20000):
    model.fit(*next_batch(), epochs=1, verbose=0)
""",
        # fine-tuning in two stages: two compiles (low confidence, hidden by default)
        """
import tensorflow as tf
base = tf.keras.applications.MobileNetV2(include_top=False)
model = tf.keras.Sequential([base, tf.keras.layers.Dense(1)])
for trainable, lr in [(False, 1e-3), (True, 1e-5)]:
    base.trainable = trainable
    model.compile(optimizer=tf.keras.optimizers.Adam(lr), loss="mse")
    model.fit(ds, epochs=5)
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
    return tf.keras.Model(inputs, outputs)  # expect: LL503

for fold, (train_idx, val_idx) in enumerate(kfold.split(X)):
    model = build_model()
    model.compile(optimizer="adam", loss="binary_crossentropy")
    model.fit(X[train_idx], y[train_idx], epochs=10)
""",
        """
import gc
from tensorflow import keras
for lr in learning_rates:
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
        # a hyperopt objective that is a method of the search object
        """
import tensorflow as tf
from hyperopt import fmin, tpe
def make_model(units):
    return tf.keras.Sequential([tf.keras.layers.Dense(units), tf.keras.layers.Dense(1)])  # expect: LL503
class Search:
    def objective(self, params):
        model = make_model(int(params["units"]))
        model.compile(optimizer="adam", loss="mse")
        return model.fit(self.x, self.y, verbose=0).history["loss"][-1]
    def run(self, space):
        return fmin(self.objective, space, algo=tpe.suggest, max_evals=50)
""",
        # an Optuna objective: one model per trial
        """
import optuna
import tensorflow as tf
def objective(trial):
    model = tf.keras.Sequential([tf.keras.layers.Dense(trial.suggest_int("units", 8, 64))])  # expect: LL503
    model.compile(optimizer="adam", loss="mse")
    return model.fit(x, y).history["loss"][-1]
optuna.create_study().optimize(objective, n_trials=100)
""",
        # the same model compiled again before every episode's fit
        """
from tensorflow import keras
model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(2, activation="softmax")])
for episode in range(5000):
    x, y, advantage = run_episode(model)
    model.compile(loss=make_loss(advantage), optimizer="rmsprop")  # expect: LL503
    model.fit(x, y, verbose=0)
""",
        # a method that replaces the model it holds, called from a loop
        """
from keras.models import model_from_json
class Player:
    def reload(self, config):
        self.model = model_from_json(config)  # expect: LL503
player = Player()
for game in range(100000):
    if game % 10 == 0:
        player.reload(read_config())
    play(player)
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
    reported: set[int] = set()

    # Constructions in a loop; a local builder's construction is reported where the builder builds.
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
        inside = _builder_construction(facts, models, call)
        if inside is not None:
            target, builder = inside
            if id(target.node) in reported:
                continue
            reported.add(id(target.node))
            yield _violation(
                facts, target, confidence, _doing(facts, target.node),  # type: ignore[arg-type]
                f"on every call of '{builder}', which the loop at line {facts.line_of(loop)} calls",
            )
            continue
        reported.add(id(call))
        yield _violation(facts, place, confidence, doing, "on every iteration")

    # The same model compiled again on every iteration (built once, before the loop).
    for place in facts.index.calls_named("compile"):
        found = _recompiled(facts, models, place)
        if found is not None:
            yield found

    # Constructions in functions that run again and again: a method called from a loop, an
    # Optuna objective or a KerasTuner hypermodel, a builder one of them calls.
    # A builder's own construction is judged where the builder is called (the caller keeps the
    # model or clears the session), unless a search calls the builder itself.
    repeated = _repeated_functions(facts)
    trials = per_trial_functions(facts)
    for place in facts.index.ordered_calls:
        call = place.node
        assert isinstance(call, cst.Call)
        if place.loops or id(call) in reported or models.construction(call) is None:
            continue
        info = place.function(facts)
        if info is None or info not in repeated:
            continue
        if info not in trials and _returned(place, info):
            continue
        confidence, why = repeated[info]
        found = _judge_in_function(facts, models, place, info, call, confidence)
        if found is None:
            continue
        inside = _builder_construction(facts, models, call)
        if inside is not None:
            target, builder = inside
            if id(target.node) not in reported:
                reported.add(id(target.node))
                yield _violation(
                    facts, target, found, _doing(facts, target.node),  # type: ignore[arg-type]
                    f"on every call of '{builder}', which '{info.name}' calls and which is {why}",
                )
            continue
        reported.add(id(call))
        yield _violation(facts, place, found, _doing(facts, call), f"on every call of '{info.name}', which is {why}")


def _recompiled(facts: ModuleFacts, models: KerasModels, place: Place) -> Violation | None:
    """``model.compile(...)`` in a loop on a Keras model the loop does not rebuild: every
    compile makes a new optimizer, new metrics and a new training function for the same model,
    and what the earlier compiles made is never released (``for episode ...: model.compile(...);
    model.fit(...)``)."""
    call = place.node
    assert isinstance(call, cst.Call)
    if not isinstance(call.func, cst.Attribute):
        return None
    receiver = dotted_name(call.func.value)
    loops = [loop for loop in place.loop_nodes if isinstance(loop, (cst.For, cst.While))]
    if receiver is None or not loops or len(loops) != len(place.loop_nodes):
        return None
    if models.name(receiver, place) is None:
        return None
    for loop in loops:
        info = facts.structure.loops.get(loop)
        root = receiver.split(".")[0] if not receiver.startswith("self.") else receiver
        if info is None or root in info.rebound or receiver in info.rebound:
            return None  # a new model each iteration (or one per model of a list): judged as a construction
        body = loop.body  # type: ignore[attr-defined]
        if any(_is_clear_session(facts, c) or _helper_clears(facts, models, c) for c in calls_in(body)):
            return None
    innermost = loops[-1]
    trains = any(
        isinstance(c.func, cst.Attribute) and c.func.attr.value in _TRAINING_METHODS - {"compile"} and dotted_name(c.func.value) == receiver
        for c in calls_in(innermost.body)  # type: ignore[attr-defined]
    )
    if few_runs(facts, loops):
        confidence = Confidence.LOW  # two or three learning rates, fine-tuning in stages
    else:
        confidence = Confidence.HIGH if trains else Confidence.MEDIUM
    return Violation(
        node=call,
        message=(
            f"'{facts.describe(call)}' compiles the same Keras model again on every iteration of the loop at line "
            f"{facts.line_of(innermost)}: each compile() makes a new optimizer, new metrics and a new training "
            "function, and what earlier compiles made stays in TensorFlow's and Keras's state, so memory grows each time"
        ),
        confidence=confidence,
        statement=place.statement(),
        help=(
            "compile once, before the loop; feed what changes per iteration as data (sample_weight), through a "
            "tf.Variable the loss reads, or by setting model.optimizer.learning_rate"
        ),
    )


def _calling_loops(facts: ModuleFacts, info: FunctionInfo, depth: int = 0) -> list[cst.CSTNode]:
    """The loops that call ``info``, directly or through the functions that call it."""
    if depth > 4:
        return []
    tf = tf_graph(facts)
    loops: list[cst.CSTNode] = []
    for site in tf.sites_of(info):
        loops.extend(site.loop_nodes)
        caller = site.function(facts)
        if caller is not None and caller is not info:
            loops.extend(_calling_loops(facts, caller, depth + 1))
    return loops


def _keeps_results(body: cst.CSTNode) -> bool:
    """The loop body stores what a call returned into a container or an attribute
    (``model = train(hp); best_models.append(model)``)."""
    from_calls: set[str] = set()
    for node in walk(body, into=not_into_scopes):
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
            for target in node.targets:
                from_calls.update(bound_names(target.target))
    return bool(from_calls) and any(_kept(node, from_calls) for node in walk(body, into=not_into_scopes))


def _returned(place: Place, info: FunctionInfo) -> bool:
    """The function returns the model it builds here (a builder)."""
    assert info.node is not None
    parent = place.parent
    if isinstance(parent, cst.Return):
        return True
    names = _bound_to(place) or set()
    return any(
        isinstance(n, cst.Return) and n.value is not None and dotted_name(n.value) in names
        for n in walk(info.node.body, into=not_into_scopes)
    )


def _violation(facts: ModuleFacts, place: Place, confidence: Confidence, doing: str, when: str) -> Violation:
    call = place.node
    return Violation(
        node=call,
        message=(
            f"'{facts.describe(call)}' {doing} a Keras model {when}, without clear_session(): Keras's "
            "global state keeps every model's layers and grows each time"
        ),
        confidence=confidence,
        statement=place.statement(),
    )


def _doing(facts: ModuleFacts, call: cst.Call) -> str:
    return "loads" if is_model_loader(facts.imports.resolve(call.func)) else "builds"


def _builder_construction(facts: ModuleFacts, models: KerasModels, call: cst.Call) -> tuple[Place, str] | None:
    """For a call of a local builder, the construction in the builder that makes the model it
    returns (the line that creates what leaks), with the builder's name."""
    func = call.func
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
    definition = models.builders.get(name) if name else None
    if definition is None or models.construction(call, builders=False) is not None:
        return None
    inside = [
        p for p in facts.index.ordered_calls
        if p.scope is definition and models.construction(p.node, builders=False) is not None  # type: ignore[arg-type]
    ]
    if not inside:
        return None
    returned = {
        dotted_name(n.value) for n in walk(definition.body, into=not_into_scopes) if isinstance(n, cst.Return) and n.value is not None
    }
    for p in inside:
        parent = p.parent
        if isinstance(parent, cst.Return) or (
            isinstance(parent, cst.Assign) and any(set(bound_names(t.target)) & returned for t in parent.targets)
        ):
            return p, definition.name.value
    return inside[0], definition.name.value


def _repeated_functions(facts: ModuleFacts) -> dict[FunctionInfo, tuple[Confidence, str]]:
    """Functions that run again and again (called in a loop, through objects too, or once per
    trial by a hyper-parameter search), and the functions they call."""
    tf = tf_graph(facts)
    found = dict(tf.repeated)
    trials = per_trial_functions(facts)
    frontier = []
    for info, why in trials.items():
        found[info] = (Confidence.HIGH, why)
        frontier.append(info)
    while frontier:
        caller = frontier.pop()
        for _, callee in tf.calls_by_caller.get(caller, []):
            if callee not in found or found[callee][0].rank < found[caller][0].rank:
                found[callee] = (found[caller][0], f"called from '{caller.name}', {found[caller][1]}")
                frontier.append(callee)
    return found


def _judge_in_function(
    facts: ModuleFacts, models: KerasModels, place: Place, info: FunctionInfo, call: cst.Call, confidence: Confidence
) -> Confidence | None:
    """How sure a construction in a repeated function leaks (None: it does not)."""
    assert info.node is not None
    body = info.node.body
    calls = calls_in(body)
    if any(_is_clear_session(facts, c) or _helper_clears(facts, models, c) for c in calls):
        return None
    for loop in _calling_loops(facts, info):
        loop_body = loop.body if isinstance(loop, (cst.For, cst.While)) else loop
        if any(_is_clear_session(facts, c) or _helper_clears(facts, models, c) for c in calls_in(loop_body)):
            return None
        if _keeps_results(loop_body):
            return None  # the loop keeps the models it gets (an ensemble): clear_session() would break them
    names = _bound_to(place)
    if names is None or any(_kept(node, names) for node in walk(body, into=not_into_scopes)):
        return None
    trained = any(
        isinstance(c.func, cst.Attribute) and c.func.attr.value in _TRAINING_METHODS and dotted_name(c.func.value) in names
        for c in calls
    ) or _builder_compiles(models, call) or is_model_loader(facts.imports.resolve(call.func))
    if not trained:
        return Confidence.LOW
    return confidence


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
    if few_runs(facts, place.loop_nodes, scope=place.function(facts)):
        # k = 4 folds, three learning rates: a handful of models, bounded growth.
        return Confidence.LOW, doing
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
            if isinstance(target.target, cst.Subscript):
                return None
            if isinstance(target.target, cst.Attribute) and dotted_name(target.target.value) not in ("self", "cls"):
                return None
            names.update(bound_names(target.target))  # `self.model = ...` replaces the previous model
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
