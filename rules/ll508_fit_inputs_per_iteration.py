"""LL508 fit-inputs-per-iteration: a new Keras Sequence or TensorBoard callback for every fit() of one model."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.keras import KerasModels, is_keras_name, keras_models
from leaklint.analysis.names import dotted_name
from leaklint.analysis.structure import bound_names
from leaklint.analysis.syntax import call_argument
from leaklint.analysis.iterations import few_runs
from leaklint.analysis.torch_api import TENSORFLOW_CODE, TENSORFLOW_ROOTS
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import LOOPS, Names
from leaklint.rule import Measured, Rule, Violation


class FitInputsPerIteration(Rule):
    code = "LL508"
    name = "fit-inputs-per-iteration"
    severity = Severity.LEAK
    summary = "A loop builds a new Keras data Sequence or TensorBoard callback for every fit() of the same model, and every fit keeps what it set up for it."
    help = "build the Sequence or the callback once, before the loop (refresh a Sequence's data in on_epoch_end), or train with one fit(epochs=N)"
    #: What a file must contain: TensorFlow, a fit call, one of the classes it reports, and a loop.
    needs = TENSORFLOW_CODE & Names("fit", "fit_generator") & Names("Sequence", "PyDataset", "TensorBoard") & LOOPS
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 0), leaks=(2, 0))
    docs = """
## What it finds
A `model.fit(...)` (or `fit_generator`) inside a loop, on a Keras model the loop does not rebuild,
where the loop builds anew, each iteration, what it passes to that fit:

- the data, as an instance of a `keras.utils.Sequence` / `keras.utils.PyDataset` subclass
  (`data = SimulatedParticles(seed=round)` then `model.fit(data, epochs=1)`);
- a `keras.callbacks.TensorBoard` callback in `callbacks=[...]`.

A loop that builds a new model each iteration (k-fold, a search) is left alone: new inputs per
model are expected there (LL503 is about the models). Loops of at most five iterations are not
reported.

## Why it matters
Each `fit()` wraps the data in a data adapter and, for a Sequence, an enqueuer with its own
queue and worker state; a TensorBoard callback opens summary writers and an event file per
instance. Calling `fit()` in a loop with a fresh object every round leaves every round's adapter,
enqueuer or writers behind (held by the model's training state, by TensorFlow's resource
registry, or by open file handles), and memory or file descriptors run out after enough rounds.
One object reused across the rounds, or one `fit(epochs=N)`, sets them up once.

## Example
```python
locator = build_locator()
for round_index in range(1000):
    data = SimulatedParticles(n_batches=32, batch_size=16, seed=round_index)
    locator.fit(data, epochs=1, verbose=0)
```

## Use instead
```python
class SimulatedParticles(tf.keras.utils.Sequence):
    ...
    def on_epoch_end(self):
        self.seed += 1
        self.rng = np.random.default_rng(self.seed)   # fresh data, same Sequence

locator = build_locator()
data = SimulatedParticles(n_batches=32, batch_size=16, seed=0)
locator.fit(data, epochs=1000, verbose=0)
```

## Fix safety
No automatic fix: moving the object out of the loop needs what it is built from (a seed, a log
directory) to be computed differently.

## Known false positives
Keras releases differ in what a finished `fit()` releases; with a Sequence that holds little and
a few hundred rounds the growth may stay small. On bench/realcode the rule reports nothing.

## References
- `keras.utils.Sequence` ("`on_epoch_end`: method called at the end of every epoch", the place
  to change the data between epochs): https://keras.io/api/utils/python_utils/#sequence-class
- The TensorBoard callback not closing its files, one writer per run:
  https://github.com/keras-team/keras/issues/4533 and https://github.com/keras-team/keras/issues/6774
- Memory growing during `fit()` with a TensorBoard callback: https://github.com/tensorflow/tensorflow/issues/34876
- Runtime repro: `leaklint verify LL508` measures the leaky and the fixed loop body.
"""
    VALID = (
        # built once, reused by every fit
        """
from tensorflow import keras
model = build_model()
board = keras.callbacks.TensorBoard(log_dir="logs")
data = Particles(seed=0)
for episode in range(5000):
    model.fit(data, epochs=1, callbacks=[board])
""",
        # a new model per fold: new callbacks per model are expected
        """
from tensorflow import keras
for fold in range(10):
    model = keras.Sequential([keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    board = keras.callbacks.TensorBoard(log_dir=f"logs/{fold}")
    model.fit(x, y, callbacks=[board])
""",
    )
    INVALID = (
        """
import numpy as np
from tensorflow import keras
class Particles(keras.utils.Sequence):
    def __init__(self, seed):
        super().__init__()
        self.rng = np.random.default_rng(seed)
    def __len__(self):
        return 32
    def __getitem__(self, index):
        return self.rng.random((16, 8)), self.rng.random((16, 1))
model = keras.Sequential([keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
for round_index in range(1000):
    data = Particles(seed=round_index)  # expect: LL508
    model.fit(data, epochs=1, verbose=0)
""",
        """
from tensorflow import keras
model = keras.models.load_model("q_network.keras")
for episode in range(5000):
    states, targets = play(model)
    board = keras.callbacks.TensorBoard(log_dir="logs/dqn")  # expect: LL508
    model.fit(states, targets, epochs=1, callbacks=[board])
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """One `fit(epochs=1)` per round with a new Sequence, vs the same Sequence every round."""

        requires = ("tensorflow", "numpy")
        tensors = False
        host_meter = "heap"

        def setup(self, ctx):
            import numpy as np
            import tensorflow as tf

            class Batches(tf.keras.utils.Sequence):
                def __init__(self, seed):
                    super().__init__()
                    self.rng = np.random.default_rng(seed)

                def __len__(self):
                    return 4

                def __getitem__(self, index):
                    return self.rng.random((32, 16)).astype("float32"), self.rng.random((32, 1)).astype("float32")

            ctx.Batches = Batches
            ctx.data = Batches(0)
            ctx.round = 0
            ctx.model = tf.keras.Sequential([tf.keras.Input((16,)), tf.keras.layers.Dense(1)])
            ctx.model.compile(optimizer="sgd", loss="mse")

        def leaky(self, ctx):
            ctx.round += 1
            ctx.model.fit(ctx.Batches(ctx.round), epochs=1, verbose=0)

        def fixed(self, ctx):
            ctx.model.fit(ctx.data, epochs=1, verbose=0)


# --- detection ------------------------------------------------------------------------------------
_FIT_METHODS = frozenset({"fit", "fit_generator"})
#: Keras data sources that keep per-``fit`` state (a data adapter, an enqueuer and its workers).
_SEQUENCE_BASES = frozenset({"Sequence", "PyDataset"})
#: Keras callbacks that open resources per instance (summary writers and their event files).
_RESOURCE_CALLBACKS = frozenset({"TensorBoard"})


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    if not facts.imports.imports_anything_from(*TENSORFLOW_ROOTS):
        return
    models = keras_models(facts)
    sequences = _sequence_classes(facts)
    reported: set[int] = set()
    for place in facts.index.calls_named(*_FIT_METHODS):
        call = place.node
        assert isinstance(call, cst.Call)
        if not place.loop_nodes or not isinstance(call.func, cst.Attribute):
            continue
        loop = place.loop_nodes[-1]
        if not isinstance(loop, (cst.For, cst.While)) or few_runs(facts, place.loop_nodes):
            continue
        receiver = call.func.value
        if models.expression(receiver, place) is None or _builds_model(models, loop):
            continue
        bound = _bound_in_loop(loop)
        data = call_argument(call, 0, "x")
        callbacks = call_argument(call, -1, "callbacks")
        candidates: list[tuple[cst.BaseExpression, str]] = []
        if data is not None:
            candidates.append((data, "data"))
        if isinstance(callbacks, (cst.List, cst.Tuple)):
            candidates.extend((e.value, "callback") for e in callbacks.elements)
        for expr, role in candidates:
            construction = bound.get(dotted_name(expr) or "") if not isinstance(expr, cst.Call) else expr
            if construction is None:
                continue
            kind = _kind(facts, sequences, construction, role)
            if kind is None or id(construction) in reported:
                continue
            reported.add(id(construction))
            yield Violation(
                node=construction,
                message=(
                    f"'{facts.describe(construction)}' builds a new {kind} on every iteration of the loop at line "
                    f"{facts.line_of(loop)} and hands it to '{facts.describe(call.func)}' of the same model: each "
                    "fit() keeps the state it sets up for it, so memory grows with every round"
                ),
                confidence=Confidence.MEDIUM,
            )


def _sequence_classes(facts: ModuleFacts) -> set[str]:
    """Local subclasses of ``keras.utils.Sequence`` / ``PyDataset`` (through local bases too)."""
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for info in facts.structure.classes.values():
            if info.name in found:
                continue
            for base in info.node.bases:
                qualified = facts.imports.resolve(base.value)
                name = dotted_name(base.value)
                if (is_keras_name(qualified) and qualified.rsplit(".", 1)[-1] in _SEQUENCE_BASES) or name in found:  # type: ignore[union-attr]
                    found.add(info.name)
                    changed = True
                    break
    return found


def _kind(facts: ModuleFacts, sequences: set[str], construction: cst.Call, role: str) -> str | None:
    func = construction.func
    qualified = facts.imports.resolve(func)
    leaf = (qualified or dotted_name(func) or "").rsplit(".", 1)[-1]
    if role == "data":
        if isinstance(func, cst.Name) and func.value in sequences:
            return f"'{func.value}' data sequence (a keras.utils.Sequence)"
        if is_keras_name(qualified) and leaf in _SEQUENCE_BASES:
            return "Keras data sequence"
        return None
    if is_keras_name(qualified) and leaf in _RESOURCE_CALLBACKS:
        return f"'{leaf}' callback (with its own summary writers and event files)"
    return None


def _bound_in_loop(loop: cst.For | cst.While) -> dict[str, cst.Call]:
    """Names the loop body binds to a call, each iteration (the last binding wins)."""
    found: dict[str, cst.Call] = {}
    for node in walk(loop.body, into=not_into_scopes):
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
            for target in node.targets:
                for name in bound_names(target.target):
                    found[name] = node.value
    return found


def _builds_model(models: KerasModels, loop: cst.CSTNode) -> bool:
    """The loop builds or loads a model each iteration: new inputs per model are expected."""
    return any(isinstance(n, cst.Call) and models.construction(n) is not None for n in walk(loop.body))  # type: ignore[attr-defined]
