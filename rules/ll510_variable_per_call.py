"""LL510 variable-per-call: a ``tf.Variable`` created on every training step."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from leaklint.analysis.calls import caller_of
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.guards import absent_names, lazily_built
from leaklint.analysis.iterations import few_runs
from leaklint.analysis.names import dotted_name, names_read
from leaklint.analysis.syntax import subscript_base
from leaklint.analysis.keras import KERAS_STEP_METHODS, is_keras_callback_hook, is_keras_layer_method
from leaklint.analysis.places import Level, Place, loop_level, step_level, walk_with_ancestors
from leaklint.analysis.structure import FunctionInfo
from leaklint.analysis.tensorflow import in_tf_function, tf_api, tf_graph, training_sites
from leaklint.analysis.torch_api import CHECKPOINT_ITERATORS, LOOPS_OR_FUNCTIONS, TENSORFLOW_CODE, TENSORFLOW_ROOTS
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names
from leaklint.rule import Measured, Rule, Violation


class VariablePerCall(Rule):
    code = "LL510"
    name = "variable-per-call"
    severity = Severity.LEAK
    summary = "A tf.Variable is created on every training step (in the loop, a function it calls, a Keras call() or train_step), so a new variable piles up each step."
    help = (
        "create the variable once (in __init__ or build, or before the loop) and assign() new values to it; "
        "use tf.constant for a value that never changes"
    )
    #: What a file must contain: TensorFlow, the name ``Variable``, and a loop or a function to repeat it.
    needs = TENSORFLOW_CODE & Names("Variable") & LOOPS_OR_FUNCTIONS
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 0), leaks=(2, 0))
    docs = """
## What it finds
A call of `tf.Variable(...)` in eager (TF2) code that runs once per training step:

- in the body of a training loop (one with a `tf.GradientTape` block or an
  `optimizer.apply_gradients(...)` call, or that iterates over batches) — high confidence — or
  of a loop over epochs or steps (medium);
- in a function or method that such a loop calls (through objects of the file's classes too:
  `exp.propagation(params)` on an `exp = Experiment()`), and in whatever that function calls;
- in a method Keras runs for every batch: `call` of a subclass of a Keras layer or model,
  a custom `train_step` / `test_step` / `predict_step`, a callback's per-batch or per-epoch hook;
- in a function that runs one training step itself (a `GradientTape` block outside its own
  loops) and is called from a loop.

It stays quiet for variables created at module level, in a class body, in `__init__` (an object
built per step is another finding), in a function called once or only from loops over structure
(layers, sizes) or a few literal iterations, in `build` unless a per-step method calls it
unguarded, behind a guard that creates once and keeps the variable (`if self.v is None:
self.v = tf.Variable(...)`, `if not hasattr(self, "v"):`), and in graph-mode (TF1) files: there a
`tf.Variable` built while the session runs is an op added to the graph, which LL504 reports.

## Why it matters
A `tf.Variable` is state: each call allocates a new resource on the device, initializes it and
registers it with whatever is watching. Created every step, the variables pile up wherever
something sees them: a `GradientTape` watches trainable variables it sees created, an optimizer
that is given them makes slot variables for each new one (and keeps them), a Keras layer tracks
variables assigned to it, a list or a closure keeps them all; memory rises every iteration and
each step pays for the allocation. Inside a `tf.function` — and Keras runs `call` and
`train_step` inside one during `fit` — creating a variable on any call but the first raises
`ValueError: tf.function only supports singleton tf.Variables created on the first call`
(older versions: "tried to create variables on non-first call").

## Example
```python
class Experiment:
    def propagation(self, params):
        dt = tf.Variable(self.ts[1] - self.ts[0], dtype=tf.complex128)   # a new variable per call
        return tf.linalg.expm(-1j * self.hamiltonian(params) * dt)

for it in range(iterations):
    with tf.GradientTape() as tape:
        goal = infidelity(exp.propagation(params), target)
    optimizer.apply_gradients(zip(tape.gradient(goal, [params]), [params]))
```

## Use instead
```python
class Experiment:
    def propagation(self, params):
        dt = tf.constant(self.ts[1] - self.ts[0], dtype=tf.complex128)   # a value, not state
        return tf.linalg.expm(-1j * self.hamiltonian(params) * dt)
```
For state that changes between steps, create the variable once (in `__init__` or `build`) and
update it with `self.v.assign(value)`.

## Fix safety
No automatic fix: `tf.constant` is right only for a value nothing assigns to or trains; a
variable that holds state must move to where the object is built, which is a restructuring.

## Known false positives
A function called from an epoch loop only once in a while (`if epoch % 10 == 0:`) still creates
a variable each time it runs; the growth is slower than reported. A variable created per step
only to take a gradient with respect to an input (`x = tf.Variable(batch)` under a tape) is
freed when the name is rebound, if nothing else keeps it; `tape.watch(tf.constant(batch))`
gives the same gradient without a variable. leaklint cannot see the loops of other modules: a
function of a library file that a training script calls per step is only reported when its own
file shows the per-step call (or it is a Keras `call` / `train_step`).

On bench/realcode the rule reports nothing, at any confidence. Of its 138 files that call
`tf.Variable`, most create them at module level, in `__init__` / `build`, in a function called
once, or in graph-mode code (LL504's); the per-step creations there are in library files whose
training loop lives in another file (the Faster R-CNN tutorial's anchor target builds a
`tf.Variable` per call only to `scatter_update` it), which a single-file rule does not see. At
first it reported SimCLR's `perform_evaluation`, which makes a `global_step` variable for each
checkpoint it evaluates: a whole evaluation run per call (it runs its own step loop), from a loop
over `tf.train.checkpoints_iterator`; such calls are no longer counted as steps.

## References
- The pulse optimizer whose propagation made new `tf.Variable`s under the tape on every goal
  evaluation, memory rising with every iteration: https://github.com/q-optimize/c3/issues/38,
  fixed with `tf.constant` in https://github.com/q-optimize/c3/pull/46
- Eager training running out of memory; the TensorFlow team's diagnosis: a `VarHandleOp` created
  again after the first minibatch means variables are created every iteration:
  https://github.com/tensorflow/tensorflow/issues/20218
- A variable created in a `tf.function` body ("tried to create variables on non-first call"):
  https://github.com/tensorflow/tensorflow/issues/26812 and
  https://github.com/tensorflow/tensorflow/issues/40229 (create variables only on the first call)
- `K.variable(weights)` in a loss run by `fit`: "tf.function only supports singleton
  tf.Variables created on the first call":
  https://github.com/dhirajmaji7/Attention-Res-UNet-with-Guided-Decoder-for-Semantic-Segmentation-of-Brain-tumors/issues/1
- TensorFlow guide, "Better performance with tf.function", creating `tf.Variable`s:
  https://www.tensorflow.org/guide/function#creating_tfvariables
- Runtime repro: `leaklint verify LL510` measures the leaky and the fixed loop body.
"""
    VALID = (
        # created once, in __init__ / build, and assigned every step
        """
import tensorflow as tf

class Scale(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.gain = tf.Variable(tf.ones(input_shape[-1:]))

    def call(self, x):
        return x * self.gain

class Trainer:
    def __init__(self, model):
        self.model = model
        self.step_count = tf.Variable(0, trainable=False)

    def train_step(self, x, y):
        self.step_count.assign_add(1)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
        return tape.gradient(loss, self.model.trainable_variables)

trainer = Trainer(tf.keras.Sequential([Scale()]))
for x, y in dataset:
    trainer.train_step(x, y)
""",
        # a lazily created variable, kept on the object: created on the first call only
        """
import tensorflow as tf

class Ema:
    def __init__(self, decay):
        self.decay = decay
        self.shadow = None

    def update(self, value):
        if self.shadow is None:
            self.shadow = tf.Variable(value, trainable=False)
        self.shadow.assign(self.decay * self.shadow + (1.0 - self.decay) * value)

ema = Ema(0.99)
for x, y in dataset:
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    ema.update(loss)
""",
        # variables built in a loop over the layer sizes, by a helper the loop calls: the model's
        # parameters, made once
        """
import tensorflow as tf

def dense_params(n_in, n_out):
    return tf.Variable(tf.random.normal([n_in, n_out]) * 0.01), tf.Variable(tf.zeros([n_out]))

sizes = [784, 256, 10]
params = []
for n_in, n_out in zip(sizes[:-1], sizes[1:]):
    params.extend(dense_params(n_in, n_out))
optimizer = tf.keras.optimizers.SGD(0.1)
for images, labels in train_ds:
    with tf.GradientTape() as tape:
        loss = forward(params, images, labels)
    optimizer.apply_gradients(zip(tape.gradient(loss, params), params))
""",
        # a function that makes its variables and then trains with them: a whole run per call
        """
import tensorflow as tf

def fit_line(xs, ys, steps=500):
    w = tf.Variable(0.0)
    b = tf.Variable(0.0)
    optimizer = tf.keras.optimizers.SGD(0.01)
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(w * xs + b - ys))
        optimizer.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
    return w.numpy(), b.numpy()

print(fit_line(train_x, train_y))
""",
        # graph-mode code: a variable built while the session runs is LL504's finding
        """
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
x = tf.placeholder(tf.float32, [None, 4])
with tf.Session() as sess:
    for step in range(100):
        counter = tf.Variable(step)
        sess.run(tf.global_variables_initializer())
""",
        # Keras builds the layer on its first call, through a guard
        """
import tensorflow as tf

class Gate(tf.keras.layers.Layer):
    def make_weights(self, width):
        self.kernel = tf.Variable(tf.random.normal([width, width]))

    def call(self, x):
        if not self.built_once:
            self.make_weights(x.shape[-1])
            self.built_once = True
        return tf.sigmoid(x @ self.kernel) * x
""",
        # an evaluation per checkpoint the training job writes: a whole run per call, which
        # runs its own step loop
        """
import tensorflow as tf

def evaluate(model, ckpt, eval_ds, eval_steps):
    checkpoint = tf.train.Checkpoint(model=model, step=tf.Variable(0, dtype=tf.int64))
    checkpoint.restore(ckpt).expect_partial()
    accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
    iterator = iter(eval_ds)
    for step in range(eval_steps):
        x, y = next(iterator)
        accuracy.update_state(y, model(x, training=False))
    return int(checkpoint.step), float(accuracy.result())

for ckpt in tf.train.checkpoints_iterator("runs/model", min_interval_secs=30):
    print(evaluate(model, ckpt, eval_ds, 100))
""",
        # an epoch's accumulator: made once per epoch and used by the epoch's batch loop
        """
import tensorflow as tf

for epoch in range(epochs):
    seen = tf.Variable(0, dtype=tf.int64, trainable=False)
    for images, labels in train_ds:
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        seen.assign_add(tf.shape(images, out_type=tf.int64)[0])
    print(epoch, int(seen))
""",
        # accumulators made on the first call, under a guard that the branch fills
        """
import tensorflow as tf

class GradientAccumulator:
    def __init__(self):
        self._sums = []

    def __call__(self, gradients):
        if not self._sums:
            self._sums.extend([tf.Variable(tf.zeros_like(g), trainable=False) for g in gradients])
        for total, g in zip(self._sums, gradients):
            total.assign_add(g)

accumulate = GradientAccumulator()
for x, y in train_ds:
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    accumulate(tape.gradient(loss, model.trainable_variables))
""",
    )
    INVALID = (
        # the benchmark's story in a different shape: constants wrapped in variables by a method
        # that the training loop calls under the tape
        """
import numpy as np
import tensorflow as tf

class Chain:
    def __init__(self, length):
        self.length = length
        self.coupling = np.linspace(0.1, 1.0, length)

    def energy(self, spins):
        j = tf.Variable(self.coupling, dtype=tf.float32)  # expect: LL510
        return -tf.reduce_sum(j * spins[:-1] * spins[1:])

chain = Chain(64)
spins = tf.Variable(tf.random.uniform([65], -1.0, 1.0))
optimizer = tf.keras.optimizers.Adam(0.01)
for it in range(2000):
    with tf.GradientTape() as tape:
        loss = chain.energy(tf.tanh(spins))
    optimizer.apply_gradients([(tape.gradient(loss, spins), spins)])
""",
        # a Keras layer that makes its weight in call(): a new variable every batch
        """
import tensorflow as tf

class NoisyDense(tf.keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.units = units

    def call(self, x):
        noise = tf.Variable(tf.random.normal([x.shape[-1], self.units]), trainable=False)  # expect: LL510
        return x @ noise
""",
        # directly in the batch loop, kept in a list
        """
import tensorflow as tf

snapshots = []
for images, labels in train_ds:
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(images, training=True))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    snapshots.append(tf.Variable(loss, trainable=False))  # expect: LL510
""",
        # a helper of a per-step function: the step calls it, so it runs every step too
        """
import tensorflow as tf

def margin(y):
    return tf.Variable(tf.fill(tf.shape(y), 0.2))  # expect: LL510

def train_one(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.nn.relu(margin(y) - y * model(x)))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

for epoch in range(10):
    for x, y in train_ds:
        train_one(x, y)
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A step that creates a new trainable variable and hands it to the optimizer (which makes
        its slot variables and keeps them), vs a step that assigns to one variable made once. The
        optimizer is TensorFlow's own v1 Adam, which runs eagerly in TF2 and keeps slots per
        variable as tf_keras (Keras 2) optimizers do; a Keras 3 optimizer refuses a variable it
        was not built with (``ValueError: Unknown variable``) instead of keeping it."""

        requires = ("tensorflow",)
        tensors = False
        host_meter = "heap"

        def setup(self, ctx):
            import tensorflow as tf
            ctx.w = tf.Variable(tf.zeros([256, 256]))
            ctx.bias = tf.Variable(tf.zeros([256]))
            ctx.x = tf.random.normal([64, 256])
            ctx.optimizer = tf.compat.v1.train.AdamOptimizer(1e-3)

        def _step(self, ctx, bias):
            import tensorflow as tf
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(ctx.x @ ctx.w + bias))
            grads = tape.gradient(loss, [ctx.w, bias])
            ctx.optimizer.apply_gradients(zip(grads, [ctx.w, bias]))

        def leaky(self, ctx):
            import tensorflow as tf
            self._step(ctx, tf.Variable(tf.zeros([256])))

        def fixed(self, ctx):
            import tensorflow as tf
            ctx.bias.assign(tf.zeros([256]))
            self._step(ctx, ctx.bias)


# --- detection ------------------------------------------------------------------------------------
_VARIABLE = frozenset({"Variable"})
#: Loops that run once per training step or epoch (LL502's notion).
_PER_STEP_LEVELS = (Level.STEP, Level.EPOCH)

#: Methods that fill a container kept on an object.
_FILLING_METHODS = frozenset({"append", "extend", "insert", "update", "add", "setdefault"})

_Found = tuple[Confidence, str]


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    if not facts.imports.imports_anything_from(*TENSORFLOW_ROOTS):
        return
    places = [
        place for place in facts.index.calls_named(*_VARIABLE)
        if tf_api(facts.imports.resolve(place.node.func)) in _VARIABLE  # type: ignore[attr-defined]
    ]
    if not places:
        return
    tf = tf_graph(facts)
    if tf.graph_mode:
        return  # graph-mode code: a variable built while the graph runs is an op, LL504's finding
    steps = per_step_tf_functions(facts)
    for place in places:
        if isinstance(place.scope, (cst.Lambda, cst.ClassDef)):
            continue
        function = caller_of(place, facts)
        if lazily_built(facts, place, function) or _once_guarded(place):
            continue  # `if self.v is None: self.v = tf.Variable(...)`: created once, then reused
        info = place.function(facts)
        loops = place.loop_nodes
        region = loops[-1].body if loops and isinstance(loops[-1], (cst.For, cst.While)) else None
        if region is None and not loops and info is not None and info.node is not None:
            region = info.node.body
        if region is not None and _state_of_a_pass(place, region):
            continue
        found = step_loop(facts, place)
        if found is None and info is not None:
            found = steps.get(info)
            if found is not None and found[0] is not Confidence.HIGH and _runs_its_own_steps(facts, info):
                continue  # a whole run per call (an evaluation per checkpoint): one variable per run
        if found is None:
            continue
        confidence, where = found
        traced = " (inside a tf.function a variable created after the first call raises ValueError)" if in_tf_function(facts, function) else ""
        yield Violation(
            node=place.node,
            message=(
                f"'{facts.describe(place.node)}' creates a new tf.Variable {where}: every step allocates and "
                "initializes another variable, and whatever sees it (a tape, an optimizer's slots, a layer "
                f"or a list) keeps each one alive{traced}"
            ),
            confidence=confidence,
            statement=place.statement(),
        )


def _state_of_a_pass(place: Place, region: cst.CSTNode) -> bool:
    """``total = tf.Variable(0.0)``, then a loop of the same body (the function's, or the loop's
    that repeats the creation) that reads ``total``: the variable is the state of one pass (an
    epoch's accumulator, the weights of a run that trains them), made once per pass, not per step."""
    parent = place.parent
    if not (isinstance(parent, cst.Assign) and parent.value is place.node and len(parent.targets) == 1):
        return False
    target = parent.targets[0].target
    if not isinstance(target, cst.Name):
        return False
    return any(
        isinstance(node, (cst.For, cst.While)) and node not in place.path and target.value in names_read(node)
        for node in walk(region, into=not_into_scopes)
    )


def _runs_its_own_steps(facts: ModuleFacts, info: FunctionInfo) -> bool:
    """``info`` runs a step loop of its own (an evaluation over ``eval_steps``, a training run):
    each call is a whole run, and what it creates outside that loop is made once per run."""
    if info.node is None:
        return False
    for node, path in walk_with_ancestors(info.node.body, lambda n: isinstance(n, (cst.For, cst.While))):
        if any(isinstance(outer, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) for outer in path):
            continue
        if few_runs(facts, [node], scope=info):
            continue
        if id(node) in training_sites(facts).loops or loop_level(facts, node) in _PER_STEP_LEVELS:
            return True
    return False


def step_loop(facts: ModuleFacts, place: Place) -> _Found | None:
    """How sure a loop around ``place`` (in its own scope) runs it once per training step or
    epoch: a loop that trains (a GradientTape block, ``apply_gradients``) or iterates batches is
    high, one named as an epoch or step loop medium; a loop over structure (layers, sizes) or
    bounded by a few literal iterations does not count."""
    loops = place.loop_nodes
    if not loops or few_runs(facts, loops, scope=place.function(facts)):
        return None
    if any(_over_checkpoints(facts, loop) for loop in loops):
        return None  # one iteration per checkpoint a training job writes, minutes apart
    level, index = step_level(facts, place)
    trains = training_sites(facts).loops
    training = [loop for loop in loops if id(loop) in trains]
    if training:
        return Confidence.HIGH, f"on every iteration of the training loop at line {facts.line_of(training[-1])}"
    if level is Level.STEP:
        return Confidence.HIGH, f"on every iteration of the loop at line {facts.line_of(place.chain[index])}"
    if level in _PER_STEP_LEVELS:
        return Confidence.MEDIUM, f"on every iteration of the loop at line {facts.line_of(place.chain[index])}"
    return None


def per_step_tf_functions(facts: ModuleFacts) -> dict[FunctionInfo, _Found]:
    """Functions that run once per training step of TensorFlow code, with how sure and why."""
    return facts.derived(_per_step_tf_functions)


def _per_step_tf_functions(facts: ModuleFacts) -> dict[FunctionInfo, _Found]:
    tf = tf_graph(facts)
    found: dict[FunctionInfo, _Found] = {}

    def note(info: FunctionInfo, confidence: Confidence, why: str) -> bool:
        if info.name == "__init__" or (info in found and found[info][0].rank >= confidence.rank):
            return False
        found[info] = (confidence, why)
        return True

    for info in facts.structure.functions.values():
        if info.is_method and info.name in KERAS_STEP_METHODS and is_keras_layer_method(info):
            note(info, Confidence.MEDIUM, f"on every call of '{info.name}', which Keras runs for every batch")
        elif is_keras_callback_hook(facts, info):
            note(info, Confidence.MEDIUM, f"on every call of the Keras callback hook '{info.name}'")
    for place, callee in tf.resolved_calls:
        if _once_guarded(place):
            continue
        in_loop = step_loop(facts, place)
        if in_loop is not None:
            note(callee, in_loop[0], f"on every call of '{callee.name}', {in_loop[1].replace('on every iteration of', 'called in')}")
    trains = training_sites(facts).functions
    for info, (confidence, why) in tf.repeated.items():
        if confidence is not Confidence.LOW and info in trains:
            note(info, Confidence.MEDIUM, f"on every call of '{info.name}', which runs a training step and is {why}")
    frontier = list(found)
    while frontier:
        caller = frontier.pop()
        for place, callee in tf.calls_by_caller.get(caller, []):
            if callee is caller or _once_guarded(place):
                continue
            if note(callee, found[caller][0], f"on every call of '{callee.name}', which '{caller.name}' calls every step"):
                frontier.append(callee)
    return found


def _once_guarded(place: Place) -> bool:
    """Under a guard that lets it run once per object: a test that something the object keeps is
    still missing (``if self.v is None:``, ``if not self._slots:``, ``if not self.built:``) and a
    branch that fills it (assigns it, appends to it, or calls a method of ``self``, as
    ``self.build(shape)`` sets ``self.built``)."""
    for index in range(place.scope_index + 1, len(place.chain) - 1):
        parent, child = place.chain[index], place.chain[index + 1]
        if isinstance(parent, cst.If) and child is not parent.test:
            kept = {name for name in absent_names(parent.test, child is parent.body) if "." in name}
            if kept and _fills(child, kept):
                return True
    return False


def _fills(branch: cst.CSTNode, names: set[str]) -> bool:
    roots = {name.split(".", 1)[0] for name in names}
    for node in walk(branch, into=not_into_scopes):
        if isinstance(node, cst.AssignTarget) and (dotted_name(node.target) in names or subscript_base(node.target) in names):
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            receiver = dotted_name(node.func.value)
            if receiver in names and node.func.attr.value in _FILLING_METHODS:
                return True
            if receiver in roots and receiver == "self":
                return True  # a method of the object, which may set what the test reads
    return False


def _over_checkpoints(facts: ModuleFacts, loop: cst.CSTNode) -> bool:
    """``for ckpt in tf.train.checkpoints_iterator(model_dir):``: one iteration per checkpoint."""
    return (
        isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call)
        and tf_api(facts.imports.resolve(loop.iter.func)) in CHECKPOINT_ITERATORS
    )


