"""LL502 tf-function-in-loop: a new ``tf.function`` created every iteration, retraced every time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from leaklint.analysis.arguments import is_bound_to_object
from leaklint.analysis.calls import CallGraph, call_graph
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.keras import keras_models
from leaklint.analysis.names import dotted_names_in, names_read
from leaklint.analysis.places import COMPREHENSIONS, FEW_RUNS, Level, Place, per_iteration_names, step_level
from leaklint.analysis.steps import is_per_step_hook
from leaklint.analysis.structure import ClassInfo, FunctionInfo
from leaklint.analysis.iterations import few_runs
from leaklint.analysis.tensorflow import is_tf_function, tf_api, tf_graph
from leaklint.analysis.torch_api import CHECKPOINT_ITERATORS, TENSORFLOW_CODE, TENSORFLOW_ROOTS
from leaklint.analysis.walk import walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names
from leaklint.rule import Measured, Rule, Violation


class TfFunctionInLoop(Rule):
    code = "LL502"
    name = "tf-function-in-loop"
    severity = Severity.LEAK
    summary = "A tf.function is created inside a loop or a per-step function, so every iteration traces a new graph and keeps it."
    help = "create the tf.function once, outside the loop (at module level or in __init__), and call it inside the loop"
    needs = TENSORFLOW_CODE & Names("function")
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 0), leaks=(3, 0))
    docs = """
## What it finds
A call of `tf.function(...)` (`tf.function(step)`, `tf.function(lambda x: ...)`) or a function
definition decorated with `@tf.function` that runs inside a loop: high confidence in a training,
evaluation or epoch loop, medium in any other loop unless the function is stored in a container
or attribute to be reused. Also a creation inside a function that the same file calls from such a
loop — directly, or as a method of an object the file builds (`peaks.score_regions(data)`) —
or from any other loop that does not build a model per iteration and runs more than three
times, or inside a per-batch framework hook (medium confidence).

An object of a class of the file with a `@tf.function` method counts as such a creation where it
is built (`critic = Critic(net)`), when the object runs that method (`critic.value(x)`, or a
method calling `self.value(...)`): the decorated method is bound anew to each object, as a new
tf.function with an empty trace cache. It is reported at the method's decorator (the message
names the line that builds the objects). The same rules then apply as to `tf.function(...)`: an
object built per batch is reported, one built per configuration from what the iteration binds
(`for config in sweep: learner = Learner(config)`, as `tf.function(make_step(config))`), kept in
a container or an attribute, or built once per run is not, and Keras models are left out (a new
model needs its own trace).

It stays quiet for `@tf.function` at module level, in a class body or in `__init__` / `build`
(loops and comprehensions there included: they run once per object), in a function called once
(a `train()` that defines its `train_step` and then loops), under a lazy-creation guard
(`if self._step is None:`), inside a function that is itself a `tf.function` (nested
definitions are traced once), in a loop around a whole training loop (one function per fold or
per model is needed when each fold builds a new model), in loops that run a handful of times by
their literals (`for fold in range(5)`), for functions collected into a container
(`{name: tf.function(make(name)) for name in heads}`), and in a loop that wraps a different
callable each time (`for model in models: tf.function(model.call)`, `tf.function(make_step(agent))`), and in a function that is
itself a whole run: it builds the state its tf.function closes over (a model, an optimizer,
metrics, a dataset) and calls the function from a loop of its own (`train_and_eval(config)` in a
sweep, an evaluation per checkpoint of `tf.train.checkpoints_iterator`): one trace per run,
unless that function is itself called once per batch or step.

## Why it matters
A `tf.function` keeps a cache of traced graphs; the cache belongs to the `Function` object. A new
object has an empty cache, so creating one per iteration traces the Python code into a new graph
every time: tracing costs far more than running the step, and TensorFlow warns "N out of the last
N calls to <function> triggered tf.function retracing... (1) creating @tf.function repeatedly in
a loop". Each trace also registers concrete functions with the runtime, and users report memory
growing with every retrace until the process is killed.

## Example
```python
for x, y in dataset:
    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    loss = train_step(x, y)
```

## Use instead
```python
@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

for x, y in dataset:
    loss = train_step(x, y)
```

## Fix safety
No automatic fix: moving the `tf.function` out of the loop needs what it closes over (the model,
the optimizer) to exist there, a restructuring of the code.

## Known false positives
Creating a handful of functions in a loop over configurations and keeping them is fine; the rule
accepts it when they are stored (`steps[name] = tf.function(...)`). A function whose caller runs
it a few times only, from a loop leaklint cannot bound, is still reported. Retracing caused by
passing Python values to one long-lived `tf.function` is LL505's business; retracing on changing
shapes is not looked for. On bench/realcode the rule reports nothing: the tutorials there define
their `tf.function`s once. At first it reported SimCLR's colab and evaluation code, which define
a `tf.function` once per training run of a sweep or once per evaluation call, closing over the
model and metrics that run builds; these are no longer reported.

## References
- TensorFlow guide, "Better performance with tf.function", controlling retracing:
  https://www.tensorflow.org/guide/function#controlling_retracing
- The retracing warning ("creating @tf.function repeatedly in a loop"), as users meet it:
  https://github.com/tensorflow/tensorflow/issues/46012
- Memory growing with repeated retracing: https://github.com/instadeepai/Mava/issues/346
- `@tf.function` defined inside a function called in a loop: https://github.com/lshug/first-order-model-tf/issues/22
- A `@tf.function` method makes a new function for each object it is bound to (`Function.__get__`,
  kept weakly per instance): https://github.com/tensorflow/tensorflow/blob/master/tensorflow/python/eager/polymorphic_function/polymorphic_function.py
- Runtime repro: `leaklint verify LL502` measures the leaky and the fixed loop body.
"""
    VALID = (
        # an evaluation per checkpoint the training job writes: a whole run per call
        """
import tensorflow as tf
def evaluate_checkpoint(model, ckpt, eval_ds):
    tf.train.Checkpoint(model=model).restore(ckpt).expect_partial()
    accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
    @tf.function
    def eval_step(x, y):
        accuracy.update_state(y, model(x, training=False))
    for x, y in eval_ds:
        eval_step(x, y)
    return accuracy.result().numpy()
for ckpt in tf.train.checkpoints_iterator("runs/model", min_interval_secs=60):
    print(ckpt, evaluate_checkpoint(model, ckpt, eval_ds))
""",
        # a sweep: each call of train_and_eval() is a whole run with its own model, optimizer and
        # metrics, which its tf.function steps close over and call in the run's own loop
        """
import tensorflow as tf
def train_and_eval(width, dataset, epochs=5):
    model = build_classifier(width)
    optimizer = tf.keras.optimizers.Adam()
    accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        accuracy.update_state(y, model(x))
    for _ in range(epochs):
        for x, y in dataset:
            train_step(x, y)
    return accuracy.result().numpy()
results = {}
for width in widths:
    results[width] = train_and_eval(width, train_ds)
""",
        """
import tensorflow as tf
@tf.function
def train_step(x, y):
    return model(x)
for x, y in dataset:
    train_step(x, y)
""",
        """
import tensorflow as tf
class Trainer:
    def __init__(self, model):
        self.model = model
        self.step = tf.function(self._step)

    def _step(self, x):
        return self.model(x)

    def fit(self, dataset):
        for x in dataset:
            self.step(x)
""",
        # defined once per call of train(), which is called once
        """
import tensorflow as tf
def train(model, dataset, epochs):
    @tf.function
    def train_step(x):
        return model(x)
    for epoch in range(epochs):
        for x in dataset:
            train_step(x)
train(model, dataset, 10)
""",
        # lazily created once
        """
import tensorflow as tf
class Predictor:
    def predict(self, x):
        if self._fn is None:
            self._fn = tf.function(self.model)
        return self._fn(x)
for batch in loader:
    predictor.predict(batch)
""",
        # one function per fold: each fold has its own model
        """
import tensorflow as tf
for fold in range(5):
    model = build_model()
    step = tf.function(lambda x: model(x))
    for x in dataset:
        step(x)
""",
        # each iteration wraps a different model
        """
import tensorflow as tf
for model in ensemble:
    serve = tf.function(model.call)
    outputs.append(serve(x))
""",
        # a few kept functions, one per resolution
        """
import tensorflow as tf
steps = {}
for size in (128, 256):
    steps[size] = tf.function(make_step(size))
""",
        # the wrapper form of a whole run: the tf.function reads the model the run builds
        """
import tensorflow as tf
def evaluate_variant(depth, images, labels):
    classifier = make_classifier(depth)
    predict = tf.function(lambda x: tf.argmax(classifier(x), -1))
    hits = 0
    for x, y in zip(images, labels):
        hits += int(tf.reduce_sum(tf.cast(predict(x) == y, tf.int32)))
    return hits
for depth in depths:
    print(depth, evaluate_variant(depth, test_images, test_labels))
""",
        # an object with a tf.function method per configuration of a sweep: each one is built
        # from what the iteration binds (as tf.function(make_step(config)) would be)
        """
import tensorflow as tf
class Learner:
    def __init__(self, config):
        self.net = build_net(config)
        self.opt = tf.keras.optimizers.SGD(config.lr)
    @tf.function
    def update(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.net(x) - y))
        self.opt.apply_gradients(zip(tape.gradient(loss, self.net.trainable_variables), self.net.trainable_variables))
        return loss
for config in sweep:
    learner = Learner(config)
    for x, y in dataset:
        learner.update(x, y)
""",
        # one object built before the loop: its tf.function method traces once
        """
import tensorflow as tf
class Scaler:
    def __init__(self, mean, std):
        self.mean, self.std = mean, std
    @tf.function
    def __call__(self, x):
        return (x - self.mean) / self.std
scale = Scaler(mean, std)
for x, y in dataset:
    train_step(scale(x), y)
""",
        # a static tf.function method is never bound to the object: every object built per
        # batch shares the class's one function and its trace
        """
import tensorflow as tf
class Ops:
    def __init__(self, scale):
        self.scale = scale
    @staticmethod
    @tf.function
    def normalize(x):
        return (x - tf.reduce_mean(x)) / tf.math.reduce_std(x)
for images, labels in dataset:
    ops = Ops(0.5)
    train_step(ops.normalize(images) * ops.scale, labels)
""",
        # one function per agent, built once in __init__ and kept
        """
import tensorflow as tf
class Actors:
    def __init__(self, heads):
        self.policies = {agent: tf.function(self._make_act(agent)) for agent in heads}
""",
    )
    INVALID = (
        # the creating function loops over its tf.function itself, but runs once per batch
        """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam()

def train_on_batch(x, y, inner_steps=3):
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    @tf.function  # expect: LL502
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    for _ in range(inner_steps):
        loss = step(x, y)
    return loss

for epoch in range(10):
    for x, y in dataset:
        train_on_batch(x, y)
""",
        """
import tensorflow as tf
for x, y in dataset:
    @tf.function  # expect: LL502
    def train_step(x, y):
        return model(x)
    train_step(x, y)
""",
        """
import tensorflow as tf
for epoch in range(epochs):
    step_fn = tf.function(lambda x: model(x, training=True))  # expect: LL502
    for x in dataset:
        step_fn(x)
""",
        """
import tensorflow as tf
def run_batch(model, x):
    fn = tf.function(model.call)  # expect: LL502
    return fn(x)

for x in test_dataset:
    run_batch(model, x)
""",
        """
import tensorflow as tf
outs = []
for scale in scales:
    outs.append(tf.function(lambda t: t * scale)(image))  # expect: LL502
""",
        # a new object per batch: its tf.function method is a new tf.function, traced again
        """
import tensorflow as tf
class Critic:
    def __init__(self, net):
        self.net = net
    @tf.function  # expect: LL502
    def value(self, states):
        return tf.squeeze(self.net(states), -1)
for step, (states, returns) in enumerate(replay_batches):
    critic = Critic(value_net)
    advantages = returns - critic.value(states)
    policy_step(states, advantages)
""",
        # the same in a helper called per batch, through a method that calls the traced one
        """
import tensorflow as tf
class Augmenter:
    def __init__(self, strength):
        self.strength = strength
    @tf.function  # expect: LL502
    def _jitter(self, images):
        return tf.image.random_brightness(images, self.strength)
    def apply(self, images):
        return self._jitter(images)
def prepare(images):
    augmenter = Augmenter(0.2)
    return augmenter.apply(images)
for epoch in range(epochs):
    for images, labels in train_ds:
        train_step(prepare(images), labels)
""",
        # a method called through an object from a loop, defining its tf.function each call
        """
import tensorflow as tf
class Scorer:
    def __init__(self, model):
        self.model = model
    def score(self, dataset):
        @tf.function  # expect: LL502
        def step(x):
            return self.model(x, training=False)
        return [step(x) for x in dataset]
scorer = Scorer(model)
for cell_type in cell_types:
    scorer.score(features_for(cell_type))
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A `tf.function` defined inside the loop (a new trace, and graph, every iteration), vs once."""

        requires = ("tensorflow",)
        tensors = False
        host_meter = "heap"

        def setup(self, ctx):
            import tensorflow as tf
            tf.keras.utils.set_random_seed(0)
            ctx.weights = tf.Variable(tf.random.normal((16, 16)))
            ctx.x = tf.random.normal((8, 16))

            @tf.function
            def step(x):
                return tf.reduce_sum(tf.matmul(x, ctx.weights))

            ctx.step = step

        def leaky(self, ctx):
            import tensorflow as tf

            @tf.function
            def step(x):
                return tf.reduce_sum(tf.matmul(x, ctx.weights))

            step(ctx.x)

        def fixed(self, ctx):
            ctx.step(ctx.x)


# --- detection ------------------------------------------------------------------------------------
#: Methods that run once per object, not per step: a tf.function made there is made once.
_ONCE_METHODS = frozenset({"__init__", "__post_init__", "build", "setup", "on_fit_start", "on_train_start", "compile"})
_PER_STEP_LEVELS = (Level.STEP, Level.EPOCH)
_STORING_METHODS = frozenset({"append", "extend", "insert", "add", "setdefault", "update"})


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
    if isinstance(parent, (cst.Element, cst.DictElement, *COMPREHENSIONS)):
        return True  # into a container (a literal or a comprehension): a collection of functions kept
    if isinstance(parent, cst.Arg) and len(place.path) >= 2:
        call = place.path[-2]
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in _STORING_METHODS
    return False


def _wraps_loop_item(facts: ModuleFacts, place: Place, runners: _Runners | None = None) -> bool:
    """``for model in models: fn = tf.function(model)``: each iteration wraps a different callable,
    so a new function per iteration is needed (and the loop is not a training loop). An object
    whose methods are tf.functions (``runners``) is a different one when built from what the
    iteration binds (``Agent(config)``, as ``tf.function(make_step(config))``)."""
    call = place.node
    if not isinstance(call, cst.Call) or not call.args:
        return False
    if runners is not None:
        wrapped = [arg.value for arg in call.args]  # everything the object is built from
    elif call.args[0].keyword is not None:
        return False
    else:
        wrapped = [call.args[0].value]
    if any(isinstance(value, cst.Lambda) for value in wrapped):
        return False  # a lambda closing over the loop variable: pass it as an argument instead
    heads = {name.split(".", 1)[0] for value in wrapped for name in dotted_names_in(value)}
    return any(heads & per_iteration_names(facts, loop) for loop in place.loop_nodes)


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    if not facts.imports.imports_anything_from(*TENSORFLOW_ROOTS):
        return

    index = facts.index
    places = [
        p for p in index.calls_named("function") if is_tf_function(facts, p.node)  # type: ignore[arg-type]
    ] + [
        p
        for p in index.decorated_with("function")
        if any(is_tf_function(facts, d.decorator) for d in p.node.decorators)  # type: ignore[attr-defined]
    ]
    instances = _traced_instantiations(facts)
    if not places and not instances:
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
            decorator = _decorator(facts, node)
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
    yield from _per_object(facts, sites, traced, instances)


def _decorator(facts: ModuleFacts, node: cst.FunctionDef) -> cst.BaseExpression:
    return next(d.decorator for d in node.decorators if is_tf_function(facts, d.decorator))


def _per_object(
    facts: ModuleFacts, sites: CallGraph, traced: set[cst.CSTNode], instances: dict[Place, _Runners]
) -> Iterator[Violation]:
    """A @tf.function method whose class is built again and again, each object running it: one
    finding at the method's decorator (the creation, as for a decorated ``def``), naming the
    most frequent place that builds the objects."""
    best: dict[cst.FunctionDef, tuple[Confidence, str]] = {}
    for place, runners in instances.items():
        found = _frequency(facts, sites, place, traced, runners)
        if found is None:
            continue
        confidence, where = found
        method = min((runners.cls.find_method(name) for name in runners.traced), key=lambda m: facts.line_of(m) or 0)
        if method is None:
            continue
        where = (
            f"for each '{runners.cls.name}' object, and '{facts.describe(place.node)}' at line "
            f"{facts.line_of(place.node)} builds one {where}"
        )
        if method not in best or confidence.rank > best[method][0].rank:
            best[method] = (confidence, where)
    for method, (confidence, where) in best.items():
        decorator = _decorator(facts, method)
        yield Violation(
            node=decorator,
            message=(
                f"'@{facts.describe(decorator)} def {method.name.value}' creates a new tf.function {where}: "
                "each one traces its graph again and keeps its concrete functions alive"
            ),
            confidence=confidence,
            help="build the object once, before the loop, and reuse it",
        )


def _few_runs(facts: ModuleFacts, place: Place) -> bool:
    """Every loop around ``place`` runs a handful of times by its literals (``for fold in
    range(5)``): a few tf.functions, not one per step."""
    bounds = [facts.structure.loops[place.chain[index]].at_most for index in place.loops if place.chain[index] in facts.structure.loops]
    return bool(bounds) and all(bound is not None and bound <= FEW_RUNS for bound in bounds)


def _frequency(
    facts: ModuleFacts, sites: CallGraph, place: Place, traced: set[cst.CSTNode], runners: _Runners | None = None
) -> tuple[Confidence, str] | None:
    """How often ``place`` makes a new tf.function (a ``tf.function(...)`` call, a decorated
    ``def``, or, with ``runners``, an object whose class has @tf.function methods), or None when
    it is made once, kept, or once per run."""
    if any(_is_cache_guard(test) for test in place.guards()):
        return None
    if any(node in traced for node in place.path):
        return None  # created while an enclosing tf.function traces: once
    level, _ = step_level(facts, place)
    if place.loops:
        if level in _PER_STEP_LEVELS:
            return Confidence.HIGH, "on every loop iteration"
        if level is Level.OUTER or _stored(place) or _wraps_loop_item(facts, place, runners) or _few_runs(facts, place):
            return None
        info = place.function(facts)
        if info is not None and info.name in _ONCE_METHODS:
            return None  # a loop in __init__ / build runs once per object
        return Confidence.MEDIUM, "on every loop iteration"
    info = place.function(facts)
    if info is None or info.name in _ONCE_METHODS:
        return None
    if _runs_it_in_a_loop(facts, place, info, runners) and not _called_from_training_loop(facts, sites, info):
        return None  # a whole run per call (`train_and_eval(config)`): one trace per run
    return _called_per_step(facts, sites, info)


def _called_from_training_loop(facts: ModuleFacts, sites: CallGraph, info: FunctionInfo) -> bool:
    """Some call of ``info`` sits in a per-step loop (a loop over batches or steps, not over the
    checkpoints a training job writes), or it is a per-batch framework hook: then each of its
    runs is one step, not a whole run."""
    if is_per_step_hook(info):
        return True
    for site in _call_places(facts, sites, info):
        level, index = step_level(facts, site)
        if level in _PER_STEP_LEVELS and not _over_checkpoints(facts, site.chain[index]):
            return True
    return False


def _call_places(facts: ModuleFacts, sites: CallGraph, info: FunctionInfo) -> list[Place]:
    """Every call of ``info`` in the file: by name, as a method, or on an instance of its class."""
    return list(sites.places_of(info)) + [place for place, callee in tf_graph(facts).resolved_calls if callee is info]


def _over_checkpoints(facts: ModuleFacts, loop: cst.CSTNode) -> bool:
    """``for ckpt in tf.train.checkpoints_iterator(model_dir):``: one iteration per checkpoint
    the training job writes (minutes apart), not per step."""
    return (
        isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call)
        and tf_api(facts.imports.resolve(loop.iter.func)) in CHECKPOINT_ITERATORS
    )


def _runs_it_in_a_loop(facts: ModuleFacts, place: Place, info: FunctionInfo, runners: _Runners | None = None) -> bool:
    """The function that creates the tf.function also calls it from a loop of its own (defines
    ``train_step``, then loops over the epochs or the eval steps calling it; builds ``agent =
    Agent(model)``, then loops calling ``agent.train_step``), and the tf.function reads what that
    call builds (its model, optimizer, metrics or dataset): each call is a whole run with its own
    state, so one new trace per run, not per step."""
    node = place.node
    if isinstance(node, cst.FunctionDef):
        name, body = node.name.value, node.body
    else:
        bound = _bound_name(place)
        if bound is None:
            return False
        name, body = bound, node
    made_here = {name for scope, name in tf_graph(facts).bound_here if scope is info.node} - set(info.params)
    read = names_read(body)
    for lambda_ in walk(body):  # tf.function(lambda x: classifier(x)) reads what its lambda reads
        if isinstance(lambda_, cst.Lambda):
            read |= names_read(lambda_.body)
    if info.node is None or not read & made_here:
        return False  # it reads nothing the run makes (`self.model`): one function could serve every call
    for call in _uses(facts, name, runners):
        if call.function(facts) is info and call.loops:
            return True
    return False


def _uses(facts: ModuleFacts, name: str, runners: _Runners | None) -> list[Place]:
    """The calls that run the tf.function bound to ``name``: ``name(...)``, or with ``runners``
    (an object), ``name.method(...)`` of a method that runs one of its tf.functions."""
    if runners is None:
        return [call for call in facts.index.calls_named(name) if isinstance(call.node.func, cst.Name)]  # type: ignore[attr-defined]
    found = [
        call for call in facts.index.calls_named(*runners.methods)
        if isinstance(call.node.func, cst.Attribute) and isinstance(call.node.func.value, cst.Name)  # type: ignore[attr-defined]
        and call.node.func.value.value == name  # type: ignore[attr-defined]
    ]
    if "__call__" in runners.methods:
        found += [call for call in facts.index.calls_named(name) if isinstance(call.node.func, cst.Name)]  # type: ignore[attr-defined]
    return found


@dataclass(frozen=True)
class _Runners:
    """A class of the file with @tf.function methods: those methods (``traced``) and every
    method whose call runs one (``methods``: them and the methods calling them on ``self``)."""

    cls: ClassInfo
    traced: frozenset[str]
    methods: frozenset[str]


def _traced_instantiations(facts: ModuleFacts) -> dict[Place, _Runners]:
    """Each ``Agent(...)`` of a class of the file with a @tf.function method, whose object runs
    one (``agent.train_step(x)``). A tf.function method makes a new tf.function, with an empty
    trace cache, for each object it is called on; Keras models are left out (a new model needs
    its own trace)."""
    found: dict[Place, _Runners] = {}
    models = None
    for name, cls in facts.structure.classes_by_name.items():
        runners = _runners(facts, cls)
        if runners is None:
            continue
        for place in facts.index.calls_named(name):
            call = place.node
            if not isinstance(call.func, cst.Name) or facts.imports.resolve(call.func) is not None:  # type: ignore[attr-defined]
                continue
            models = models or keras_models(facts)
            if models.construction(call) is None and _runs_traced(facts, place, runners):  # type: ignore[arg-type]
                found[place] = runners
    return found


def _runners(facts: ModuleFacts, cls: ClassInfo) -> _Runners | None:
    methods: dict[str, cst.FunctionDef] = {}
    pending = [cls]
    while pending:  # the class's own methods win over its local bases'
        current = pending.pop(0)
        for name, node in current.methods.items():
            methods.setdefault(name, node)
        pending.extend(current.local_bases)
    traced = frozenset(
        name for name, node in methods.items()
        if any(is_tf_function(facts, d.decorator) for d in node.decorators) and is_bound_to_object(node)
    )
    if not traced:
        return None
    callers = {
        name for name, node in methods.items()
        if any(
            isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and isinstance(n.func.value, cst.Name)
            and n.func.value.value == "self" and n.func.attr.value in traced
            for n in walk(node.body)
        )
    }
    return _Runners(cls, traced, traced | callers)


def _runs_traced(facts: ModuleFacts, place: Place, runners: _Runners) -> bool:
    """The object built at ``place`` runs one of its tf.functions: ``Agent(c).step(x)``, or
    ``agent = Agent(c)`` then ``agent.step(x)`` in the same function."""
    parent = place.parent
    if isinstance(parent, cst.Attribute) and parent.attr.value in runners.methods:
        return True
    name = _bound_name(place)
    if name is None:
        return False
    scope = place.function(facts)
    return any(call.function(facts) is scope for call in _uses(facts, name, runners))


def _bound_name(place: Place) -> str | None:
    """``step`` for ``step = tf.function(...)``, ``agent`` for ``agent = Agent(...)``."""
    parent = place.parent
    if isinstance(parent, cst.Assign) and parent.value is place.node and len(parent.targets) == 1:
        target = parent.targets[0].target
        return target.value if isinstance(target, cst.Name) else None
    return None


def _called_per_step(facts: ModuleFacts, sites: CallGraph, info: FunctionInfo) -> tuple[Confidence, str] | None:
    if is_per_step_hook(info):
        return Confidence.MEDIUM, f"on every call of the per-batch hook '{info.name}'"
    places = _call_places(facts, sites, info)
    for site in places:
        if step_level(facts, site)[0] in _PER_STEP_LEVELS:
            return Confidence.MEDIUM, f"on every call of '{info.name}', which a training loop calls"
    for site in places:
        loops = list(site.loop_nodes)
        if loops and not few_runs(facts, loops) and not any(_builds_model(facts, loop) for loop in loops):
            return Confidence.MEDIUM, f"on every call of '{info.name}', which the loop at line {facts.line_of(loops[-1])} calls"
    return None


def _builds_model(facts: ModuleFacts, loop: cst.CSTNode) -> bool:
    """The loop builds or loads a Keras model every iteration: a new tf.function per model is needed."""
    models = keras_models(facts)
    body = loop.body if isinstance(loop, (cst.For, cst.While)) else loop
    return any(isinstance(node, cst.Call) and models.construction(node) is not None for node in walk(body))

