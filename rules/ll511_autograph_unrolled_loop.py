"""LL511 autograph-unrolled-loop: a Python ``for ... in range(n)`` inside a ``tf.function``, with
``n`` a Python integer at trace time: AutoGraph unrolls it, one copy of the loop body per
iteration in the traced graph."""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from leaklint.analysis.accelerators import argument_for_parameter
from leaklint.analysis.calls import constructions, function_named, local_callee
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name, names_read
from leaklint.analysis.steps import resolved_calls
from leaklint.analysis.structure import ClassInfo, FunctionInfo, int_literal
from leaklint.analysis.keras import KERAS_STEP_METHODS, is_keras_layer_method
from leaklint.analysis.syntax import call_argument
from leaklint.analysis.tensorflow import input_signature, is_tf_function, tf_api
from leaklint.analysis.torch_api import TENSORFLOW_CODE, TENSORFLOW_ROOTS
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names, Syntax
from leaklint.rule import Measured, Rule, Violation


class AutographUnrolledLoop(Rule):
    code = "LL511"
    name = "autograph-unrolled-loop"
    severity = Severity.LEAK
    summary = (
        "A Python for-loop over range(n) inside a tf.function, with n a Python integer: AutoGraph unrolls it, "
        "so every trace holds one copy of the loop body per iteration."
    )
    help = (
        "loop over tf.range(n) (one tf.while_loop, one copy of the body) and collect per-step results in a "
        "tf.TensorArray; for a whole training loop, put tf.function on the step and loop outside it"
    )
    #: What a file must contain: TensorFlow, ``tf.function`` or a step method Keras traces, and a
    #: ``for`` over ``range``.
    needs = TENSORFLOW_CODE & (Names("function") | Names(*KERAS_STEP_METHODS)) & Names("range") & Syntax(ast.For)
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 2), leaks=(2, 0))
    docs = """
## What it finds
A `for` loop over `range(...)` (also `reversed(range(...))`, `enumerate(range(...))`) in a
function that TensorFlow traces, when the loop's bounds are Python integers while it is traced.
Traced functions are those with a `@tf.function` decorator or wrapped by `tf.function(fn)`, the
`call` / `train_step` / `test_step` / `predict_step` of a Keras layer or model subclass (which
`fit()`, `evaluate()` and `predict()` trace unless `run_eagerly`), and the functions of the file
such a function calls, nested defs included (AutoGraph converts them with their caller).

A bound is a Python integer when it is:

- an integer literal, or arithmetic, `len()`, `int()`, `min()`/`max()` of such values, or a name
  bound to one (also a module or class constant: `self.STEPS` with `STEPS = 1000`);
- a dimension of a static shape (`x.shape[0]`, `x.shape.as_list()[1]`, `x.get_shape()[1]`,
  `n, t, d = x.shape`: Python integers in a traced function, unlike `tf.shape(x)[0]`, a tensor);
  for an argument of an `input_signature`, the dimension its `tf.TensorSpec` gives;
- a parameter that every call in the file passes such a value for (through the name a
  `tf.function(fn)` is bound to too) or leaves at its integer default, and that the body does not
  rebind to a tensor (`n = tf.minimum(n, limit)`); never an argument of an `input_signature`
  (positional or keyword), which arrives as a tensor;
- an attribute `self.n` that the class sets to such a value (`self.max_len = max_len` with
  `max_len=120` in `__init__`, every construction in the file passing an integer or nothing; a
  class the file never builds keeps its integer default).

The loop is reported when its body repeats one computation: it runs an optimizer step
(`apply_gradients`, `minimize`, or a function of the file that does), carries a state from one
iteration to the next (`state = cell(x, state)`, `x = x - dt * f(x)`), or takes the iteration's
slice of a tensor the function is given (`x[b * size:(b + 1) * size]`, `inputs[:, t]`), and when
that computation calls a model, a layer or a function of the file that runs TensorFlow (each copy
is then that callable's whole graph). A body of TensorFlow ops alone (`c = c @ a`) adds a few
nodes per copy and is reported only from 1,000 iterations on. It stays quiet for loops over a
model's layers (`self.blocks[i](x)`, `block = self.blocks[i]`, `getattr(self, f"layer{i}")`:
each iteration runs different weights, the graph has that size anyway), for a list's items
(`features[level]`, levels of different shapes that no `tf.while_loop` could hold), for bounds
that literals keep to 20 iterations or fewer in all (`range(4)`, `range(0, 512, 128)`), for
bounds it cannot show to be Python integers (a tensor, a value of another file, a config field),
and for loops over anything but `range` (`tf.range`, a dataset, a tensor: AutoGraph turns those
into a `tf.while_loop`).

Confidence is high when literals give the count and the body calls a model, a layer or a function
of the file; medium when the count comes from a shape or `len()`, for a body of TensorFlow ops
alone, and in the step methods Keras traces (a model compiled with `run_eagerly=True` runs them
in Python). In those step methods only a count that literals give is reported: a time loop over
`inputs.shape[1]` in a layer's `call` is Keras's own `RNN(unroll=True)`, fine for the short
sequences it is meant for, and the file does not say how long they are.

A loop that runs an optimizer step in a function `tf.function` traces (the whole epoch or batch
loop under one `tf.function`) is reported at the `tf.function` decorator or call: the line to
change is the one that traces too much. Any other loop is reported at its `for`.

## Why it matters
AutoGraph decides how to run a `for` loop by what it iterates: over a tensor (`tf.range(n)`, a
`tf.data.Dataset`) it builds one `tf.while_loop` holding one copy of the body; over a Python
`range(n)` with a Python `n` it runs the loop in Python while tracing, so the graph gets a fresh
copy of every op of the body for each of the `n` iterations. A 120-step beam search becomes
120 copies of the decoder step; an epoch loop over a batch count read from a static shape
becomes one copy of the training step per batch of every epoch. The trace takes minutes, the
graph takes tens or hundreds of megabytes of host memory for as long as the function lives, and
each retrace (a new input shape, a new Python argument) builds and keeps another one. A large
enough count is never finished: memory grows during the trace until the process is killed.

## Example
```python
class BeamDecoder(tf.Module):
    def __init__(self, max_len=120):
        self.max_len = max_len
        ...

    @tf.function
    def decode(self, state):
        tokens = tf.fill([tf.shape(state)[0]], BOS)
        for t in range(self.max_len):          # 120 copies of the step in the graph
            out, [state] = self.cell(self.embedding(tokens), [state])
            tokens = tf.argmax(self.project(out), axis=-1, output_type=tf.int32)
```

## Use instead
```python
    @tf.function
    def decode(self, state):
        tokens = tf.fill([tf.shape(state)[0]], BOS)
        steps = tf.TensorArray(tf.int32, size=self.max_len)
        for t in tf.range(self.max_len):       # one tf.while_loop
            out, [state] = self.cell(self.embedding(tokens), [state])
            tokens = tf.argmax(self.project(out), axis=-1, output_type=tf.int32)
            steps = steps.write(t, tokens)
```

## Fix safety
No automatic fix: a loop over `tf.range` needs its carried values to keep their shape and type
from one iteration to the next, and per-step results collected in a `tf.TensorArray` instead of a
Python list; a training loop needs the `tf.function` moved to its step.

## Known false positives
Unrolling on purpose: a loop whose speed matters more than the graph's size (an unrolled loop
runs faster than a `tf.while_loop` once traced), such as a time loop behind an `if self.unroll:`
switch or a shared block applied a configured number of times; the rule does not read the
switch. Suppress it with `# noqa: LL511`.

Measured on bench/realcode (90 repositories, 714 TensorFlow files): 2 findings, both debatable.
The TensorFlow NMT example's `train_step` and `test_step` step their decoder over the padded
target length (a static shape), so each trace holds one copy of the decoder per target position;
the batches all have one shape, so it is traced once, and the cost is the graph's size and the
trace time rather than growth. On 271,634 more lines of TensorFlow 2 code (SimCLR, tf-agents,
Sonnet, tensor2tensor) it reports nothing. A second reader's 40 adversarial files found seven
false positives in the first version (a parameter rebound to a tensor, an `input_signature`
passed by position, `len()` of a signature's argument, `range` with a start and a step, layers
picked through a local name, a list of pyramid levels, a helper of plain Python arithmetic); each
is fixed and kept as a test in `tests/rules/test_unrolled_loops.py`.

## References
- TensorFlow, "Autograph unrolling for loop": a beam search stepped with a Python `for` over
  `range(max_len)` in a `tf.function` made a 30-50 MB graph and a 300 s first call; written as a
  `tf.while_loop`, 500 KB: https://github.com/tensorflow/tensorflow/issues/38628
- TensorFlow, a custom `fit()` decorated with `tf.function` whose Python loops over epochs and
  batches were unrolled; memory grew until the process was killed:
  https://github.com/tensorflow/tensorflow/issues/48732
- TensorFlow, per-device memory growing under a distribution strategy, "compounded due to the
  for loops using range": https://github.com/tensorflow/tensorflow/issues/31588
- A maintainer on how AutoGraph picks a loop's kind ("if the iterated is a Tensor, then the loop
  will run in TF. Otherwise it stays in Python"): https://github.com/tensorflow/tensorflow/issues/19214
- TensorFlow guide, "Better performance with tf.function", loops:
  https://www.tensorflow.org/guide/function#loops
- Runtime repro: `leaklint verify LL511` measures the leaky and the fixed loop body.
"""

    VALID = (
        # tf.range: one tf.while_loop; a loop over the model's layers; a few literal iterations.
        """
import tensorflow as tf

class Decoder(tf.Module):
    def __init__(self, max_len=120, depth=24):
        super().__init__()
        self.max_len = max_len
        self.cell = tf.keras.layers.GRUCell(64)
        self.blocks = [tf.keras.layers.Dense(64) for _ in range(depth)]
        self.depth = depth

    @tf.function
    def decode(self, state, x):
        for t in tf.range(self.max_len):
            x, [state] = self.cell(x, [state])
        for i in range(self.depth):
            x = self.blocks[i](x)
        for _ in range(3):
            x, [state] = self.cell(x, [state])
        return x
""",
        # A bound that is a tensor (tf.shape), an input_signature (arguments are tensors), and a
        # loop outside any tf.function.
        """
import tensorflow as tf

cell = tf.keras.layers.GRUCell(64)

@tf.function
def unroll(x, state):
    for t in range(tf.shape(x)[1]):
        out, [state] = cell(x[:, t], [state])
    return state

@tf.function(input_signature=[tf.TensorSpec([None, 64]), tf.TensorSpec([None, 64]), tf.TensorSpec([], tf.int32)])
def steps(x, state, n):
    for _ in range(n):
        x, [state] = cell(x, [state])
    return x

def rollout(x, state, n=500):
    for _ in range(n):
        x, [state] = cell(x, [state])
    return x

rollout(tf.zeros([2, 64]), tf.zeros([2, 64]))
""",
        # A chain of TensorFlow ops on tensors adds a few nodes per iteration (a demonstration of
        # constant folding), not a model per iteration.
        """
import numpy as np
import tensorflow as tf

@tf.function
def chained_matmuls(x):
    a = tf.constant(np.random.randn(256, 256), dtype=tf.float32)
    c = a
    for n in range(50):
        c = c @ a
    return tf.reduce_mean(c + x)
""",
        # The training step is the tf.function; the loops around it run in Python, outside it.
        """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam()

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss

def fit(x, y, epochs=20, batch_size=32):
    for epoch in range(epochs):
        for b in range(x.shape[0] // batch_size):
            train_step(x[b * batch_size:(b + 1) * batch_size], y[b * batch_size:(b + 1) * batch_size])
""",
    )
    INVALID = (
        # A beam-search step unrolled max_len times (a default of 120): reported at the loop.
        """
import tensorflow as tf

class BeamDecoder(tf.Module):
    def __init__(self, max_len=120):
        super().__init__()
        self.max_len = max_len
        self.cell = tf.keras.layers.GRUCell(64)
        self.project = tf.keras.layers.Dense(8000)

    @tf.function
    def decode(self, state, x):
        outputs = []
        for t in range(self.max_len):  # expect: LL511
            out, [state] = self.cell(x, [state])
            outputs.append(tf.argmax(self.project(out), axis=-1))
        return tf.stack(outputs, axis=1)

decoder = BeamDecoder()
""",
        # A whole training loop in one tf.function: reported at the decorator.
        """
import tensorflow as tf

class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = tf.keras.optimizers.Adam(1e-3)

    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((self.model(x, training=True) - y) ** 2)
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))

    @tf.function  # expect: LL511
    def fit(self, x, y, epochs, batch_size):
        n_batches = x.shape[0] // batch_size
        for epoch in range(epochs):
            for b in range(n_batches):
                self.train_step(x[b * batch_size:(b + 1) * batch_size], y[b * batch_size:(b + 1) * batch_size])

trainer = Trainer(tf.keras.Sequential([tf.keras.layers.Dense(1)]))
trainer.fit(tf.zeros([4096, 8]), tf.zeros([4096, 1]), epochs=20, batch_size=256)
""",
        # tf.function(fn) on a function of the file; a time loop over a static sequence length.
        """
import tensorflow as tf

cell = tf.keras.layers.LSTMCell(128)

def encode(inputs, state):
    for t in range(inputs.shape[1]):  # expect: LL511
        out, state = cell(inputs[:, t], state)
    return out

fast_encode = tf.function(encode)
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A traced decoder whose input length changes every step, so every step traces it anew
        (as batches of new shapes do without an ``input_signature``), and the ``tf.function``
        keeps every trace. Leaky: the loop over ``range(64)`` around a dense layer is unrolled, 64
        copies of the layer in each trace. Fixed: ``tf.range(64)``, one ``tf.while_loop`` per trace."""

        requires = ("tensorflow",)
        tensors = False
        host_meter = "heap"

        def setup(self, ctx):
            import tensorflow as tf

            layer = tf.keras.layers.Dense(32, activation="tanh")
            layer.build((None, 32))

            @tf.function
            def unrolled(x):
                for _ in range(64):  # noqa: LL511 (the leaky variant)
                    x = layer(x)
                return x

            @tf.function
            def rolled(x):
                for _ in tf.range(64):
                    x = layer(x)
                return x

            ctx.unrolled, ctx.rolled = unrolled, rolled
            ctx.rows = 0

        def _input(self, ctx):
            import tensorflow as tf

            ctx.rows += 1  # a new shape: a new trace
            return tf.ones((ctx.rows, 32))

        def leaky(self, ctx):
            ctx.unrolled(self._input(ctx))

        def fixed(self, ctx):
            ctx.rolled(self._input(ctx))


# --- detection ------------------------------------------------------------------------------------
#: Literals that keep a loop nest to this many iterations in all: a small unroll, often on purpose.
FEW_STEPS = 20
#: A loop whose body runs TensorFlow ops only (no model, layer or function of the file) adds a
#: few nodes per copy: reported when literals say it runs at least this many times.
MANY_STEPS = 1000
#: Builtins whose result is a Python integer when their arguments are.
_INTEGER_BUILTINS = frozenset({"int", "min", "max", "abs", "round"})
#: Optimizer calls: a traced loop that makes them is a training loop.
_OPTIMIZER_METHODS = frozenset({"apply_gradients", "minimize"})
#: Builtins around ``range`` that keep the loop a Python loop (``reversed(range(n))``).
_RANGE_WRAPPERS = frozenset({"enumerate", "reversed"})
#: How deep names, callers and callees are followed.
_MAX_DEPTH = 4
#: What runs each step method Keras traces.
_KERAS_RUNNERS = {"train_step": "fit()", "test_step": "evaluate()", "predict_step": "predict()"}
_BUILTINS = frozenset(dir(builtins))
#: Methods of lists, dicts, tensors and TensorArrays: calling one runs no model.
_VALUE_METHODS = frozenset(
    {
        "append", "extend", "insert", "pop", "update", "get", "items", "keys", "values", "copy", "write", "read",
        "stack", "concat", "gather", "scatter", "assign", "assign_add", "assign_sub", "numpy", "get_shape",
        "set_shape", "reshape", "format", "join", "split", "lower", "upper", "strip",
    }
)


@dataclass(frozen=True)
class Count:
    """A loop bound that is a Python integer while the function is traced: its value when
    literals say it (None when a shape or ``len()`` decides), and how a message names it."""

    value: int | None
    source: str


@dataclass(frozen=True)
class Traced:
    """How a function comes to be traced: ``wrapper`` is its ``@tf.function`` decorator or the
    ``tf.function(fn)`` call (None for a step method Keras traces itself); ``via`` names the traced
    function that calls it, for a helper AutoGraph converts along with its caller."""

    wrapper: cst.BaseExpression | None
    via: str | None = None
    keras: bool = False


@dataclass(frozen=True)
class _Nest:
    """An unrolled loop and the unrolled loops inside it, with their bounds."""

    loop: cst.For
    counts: tuple[Count, ...]
    trains: bool
    runs_callable: bool

    @property
    def total(self) -> int | None:
        total = 1
        for count in self.counts:
            if count.value is None:
                return None
            total *= max(count.value, 0)
        return total


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    if not facts.imports.imports_anything_from(*TENSORFLOW_ROOTS):
        return
    traced = traced_functions(facts)
    reader = _Bounds(facts, traced)
    for function, how in traced.items():
        yield from _unrolled_in(facts, reader, function, how)


def traced_functions(facts: ModuleFacts) -> dict[FunctionInfo, Traced]:
    """Functions of the file that ``tf.function`` traces: decorated, wrapped (``tf.function(fn)``),
    a Keras layer's or model's ``call`` / ``train_step`` / ``test_step`` / ``predict_step`` (``fit``
    traces them), and the functions of the file these call (AutoGraph converts them with their
    caller)."""
    found: dict[FunctionInfo, Traced] = {}
    for info in facts.structure.functions.values():
        if info.node is None:
            continue
        wrapper = next((d.decorator for d in info.node.decorators if is_tf_function(facts, d.decorator)), None)
        if wrapper is not None:
            found[info] = Traced(wrapper)
    for place in facts.index.calls_named("function"):
        call = place.node
        assert isinstance(call, cst.Call)
        target = call_argument(call, 0, "func") if is_tf_function(facts, call) else None
        if target is None:
            continue
        scope = place.function(facts) or facts.structure.top
        node: cst.FunctionDef | None = None
        if isinstance(target, cst.Name):
            node = function_named(target.value, scope, facts)
        elif isinstance(target, cst.Attribute) and dotted_name(target) == f"self.{target.attr.value}" and scope.cls is not None:
            node = scope.cls.find_method(target.attr.value)
        info = facts.structure.functions.get(node) if node is not None else None
        if info is not None:
            found.setdefault(info, Traced(call))
    for info in facts.structure.functions.values():
        if info.is_method and info.name in KERAS_STEP_METHODS and is_keras_layer_method(info):
            found.setdefault(info, Traced(None, keras=True))
    for function, how in list(found.items()):
        _add_callees(facts, function, how, found, 0)
    return found


def _add_callees(facts: ModuleFacts, function: FunctionInfo, how: Traced, found: dict[FunctionInfo, Traced], depth: int) -> None:
    """The functions of the file ``function`` calls (nested defs included), traced with it."""
    if depth >= 2 or function.node is None:
        return
    for node in walk(function.node.body, into=not_into_scopes):
        if not isinstance(node, cst.Call):
            continue
        callee = local_callee(node, function, facts)
        if callee is None or callee.node is None or callee in found:
            continue
        found[callee] = Traced(how.wrapper, via=how.via or function.name, keras=how.keras)
        _add_callees(facts, callee, found[callee], found, depth + 1)


def _unrolled_in(facts: ModuleFacts, reader: _Bounds, function: FunctionInfo, how: Traced) -> Iterator[Violation]:
    """One violation per outermost unrolled loop nest of ``function`` that repeats a computation;
    one at the ``tf.function`` itself for the nests that run a training step."""
    assert function.node is not None
    unrolled: dict[cst.For, Count] = {}
    for node in walk(function.node.body, into=not_into_scopes):
        if isinstance(node, cst.For):
            call = _range_call(facts, node.iter)
            count = reader.range_count(call, function) if call is not None else None
            if count is not None:
                unrolled[node] = count
    nests = []
    for loop in unrolled:
        if any(other is not loop and _contains(other, loop) for other in unrolled):
            continue  # judged with the loop around it
        inner = [loop] + [other for other in unrolled if _contains(loop, other)]
        if not any(_repeats_a_computation(facts, function, other) for other in inner):
            continue
        nest = _Nest(
            loop,
            tuple(unrolled[other] for other in inner),
            trains=any(_trains(facts, function, other, 0) for other in inner),
            runs_callable=any(_runs_a_callable(facts, function, other, 0) for other in inner),
        )
        total = nest.total
        if total is not None and total <= FEW_STEPS:
            continue
        if not nest.runs_callable and (total is None or total < MANY_STEPS):
            continue  # a few ops per copy
        if how.keras and total is None:
            continue  # a Keras step method over a shape: like RNN(unroll=True), for sequences the file does not size
        nests.append(nest)
    at_wrapper = how.wrapper is not None and how.via is None
    training = [nest for nest in nests if nest.trains and at_wrapper]
    if training:
        yield _training_violation(facts, function, how.wrapper, training)  # type: ignore[arg-type]
    for nest in nests:
        if not any(nest is reported for reported in training):
            yield _loop_violation(facts, function, how, nest)


def _traced_by(function: FunctionInfo, how: Traced) -> str:
    """Why ``function``'s body is traced, for a message."""
    if how.via is not None:
        return f"'{function.name}' is traced with the tf.function '{how.via}' that calls it"
    if how.keras:
        runner = _KERAS_RUNNERS.get(function.name, "fit(), evaluate() and predict()")
        return f"Keras traces '{function.name}' in {runner} (unless the model runs eagerly)"
    return f"tf.function traces '{function.name}'"


def _loop_violation(facts: ModuleFacts, function: FunctionInfo, how: Traced, nest: _Nest) -> Violation:
    count = nest.counts[0]
    total = nest.total
    copies = f"{total} copies" if total is not None else "one copy per iteration"
    inner = f" (with the {len(nest.counts) - 1} unrolled loop(s) inside it)" if len(nest.counts) > 1 else ""
    sure = total is not None and nest.runs_callable and not how.keras
    return Violation(
        node=nest.loop,
        message=(
            f"'for ... in {facts.describe(nest.loop.iter)}'{inner} runs in Python while {_traced_by(function, how)}: "
            f"its bound is a Python integer ({count.source}), not a tensor, so tracing unrolls it (AutoGraph turns only "
            f"loops over tensors into a tf.while_loop) and the graph holds {copies} of the loop body, kept as long as "
            "the function, and built again for every retrace"
        ),
        confidence=Confidence.HIGH if sure else Confidence.MEDIUM,
    )


def _training_violation(facts: ModuleFacts, function: FunctionInfo, wrapper: cst.BaseExpression, nests: list[_Nest]) -> Violation:
    loops = ", ".join(f"line {facts.line_of(nest.loop)}" for nest in nests)
    sources = "; ".join(dict.fromkeys(count.source for nest in nests for count in nest.counts))
    return Violation(
        node=wrapper,
        message=(
            f"tf.function traces the whole training loop of '{function.name}': the loops over Python ranges from {loops} "
            f"({sources}) are unrolled while tracing, so the graph holds one copy of the training step for every "
            "iteration, built before the first step runs and kept as long as the function"
        ),
        confidence=Confidence.HIGH,
        help=(
            "put tf.function on the training step instead and run the loops in Python around it (or iterate over a "
            "tf.data.Dataset or tf.range inside)"
        ),
    )


def _range_call(facts: ModuleFacts, iterable: cst.BaseExpression) -> cst.Call | None:
    """The builtin ``range(...)`` a ``for`` iterates, also through ``reversed`` / ``enumerate``."""
    while (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Name)
        and iterable.func.value in _RANGE_WRAPPERS
        and len(iterable.args) >= 1
        and iterable.args[0].keyword is None
    ):
        iterable = iterable.args[0].value
    if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range"):
        return None
    if facts.imports.resolve(iterable.func) not in (None, "range") or "range" in facts.structure.module_functions:
        return None  # a range of a module or of the file
    if not iterable.args or len(iterable.args) > 3 or any(arg.star or arg.keyword for arg in iterable.args):
        return None
    return iterable


def _contains(outer: cst.For, inner: cst.For) -> bool:
    return any(node is inner for node in walk(outer.body, into=not_into_scopes))


# --- which bounds are Python integers ---------------------------------------------------------------
class _Bounds:
    """Reads whether an expression is a Python integer while a traced function runs."""

    def __init__(self, facts: ModuleFacts, traced: dict[FunctionInfo, Traced]) -> None:
        self.facts = facts
        #: The traced functions given an input_signature (their arguments are tensors), with it.
        self.signatures = {
            function: signature
            for function, how in traced.items()
            if how.via is None and how.wrapper is not None and (signature := input_signature(how.wrapper)) is not None
        }
        #: The ``tf.function(fn)`` calls, by the function they wrap (calls of the name they are bound to are calls of it).
        self.wrappers = {function: how.wrapper for function, how in traced.items() if how.via is None and isinstance(how.wrapper, cst.Call)}

    def range_count(self, call: cst.Call, scope: FunctionInfo) -> Count | None:
        """How many times ``range(...)`` yields, when its arguments are Python integers."""
        counts = [self.count(arg.value, scope) for arg in call.args]
        if any(count is None for count in counts):
            return None
        start, stop, step = (Count(0, "0"), counts[0], Count(1, "1")) if len(counts) == 1 else (*counts, Count(1, "1"))[:3]  # type: ignore[misc]
        values = (start.value, stop.value, step.value)  # type: ignore[union-attr]
        value = len(range(*values)) if None not in values and values[2] != 0 else None  # type: ignore[arg-type]
        sources = [c.source for c in (stop, start, step) if not _literal(c.source)]  # type: ignore[union-attr]
        return Count(value, sources[0] if sources else str(value))

    def count(self, expr: cst.BaseExpression, scope: FunctionInfo, depth: int = 0) -> Count | None:
        """A :class:`Count` when ``expr`` (read in ``scope``) is a Python integer; None when it
        is a tensor or the file does not show it."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Integer):
            return Count(int_literal(expr), expr.value)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            inner = self.count(expr.expression, scope, depth + 1)
            if inner is None:
                return None
            return Count(-inner.value if inner.value is not None else None, f"-{inner.source}")
        if isinstance(expr, cst.BinaryOperation):
            return self._arithmetic(expr, scope, depth)
        if isinstance(expr, cst.Call):
            return self._builtin(expr, scope, depth)
        shape = _shape_holder(expr)
        if shape is not None:
            return self._static_dim(expr, shape, scope)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "shape":
            return Count(None, f"the static shape '{self.facts.describe(expr)}'")  # unpacked: n, t, d = x.shape
        name = dotted_name(expr)
        if name is None:
            return None
        if "." not in name:
            return self._name(name, scope, depth)
        if name.count(".") == 1 and name.startswith("self.") and scope.cls is not None:
            return self._attribute(scope.cls, name, depth)
        return None

    def _name(self, name: str, scope: FunctionInfo, depth: int) -> Count | None:
        """A parameter (read at the calls), rebound or not in the body, or a name bound here or
        at module level."""
        rebound = self.facts.index.assigned_values(scope, name) if scope.node is not None else []
        if name not in scope.params:
            return self._all(self.facts.index.visible_values(scope, name), scope, depth, name)
        if scope in self.signatures:
            return None  # the argument is a tensor of the signature
        count = self._parameter(scope, name, depth)
        if count is None or not rebound:
            return count
        others = self._all(rebound, scope, depth, name)
        if others is None:
            return None  # n = tf.minimum(n, ...): a tensor from here on
        value = max(count.value, others.value) if count.value is not None and others.value is not None else None
        return Count(value, count.source)

    def _arithmetic(self, expr: cst.BinaryOperation, scope: FunctionInfo, depth: int) -> Count | None:
        left = self.count(expr.left, scope, depth + 1)
        right = self.count(expr.right, scope, depth + 1) if left is not None else None
        if left is None or right is None:
            return None
        value = None
        if left.value is not None and right.value is not None:
            operators = {cst.Add: int.__add__, cst.Subtract: int.__sub__, cst.Multiply: int.__mul__, cst.FloorDivide: int.__floordiv__}
            operate = operators.get(type(expr.operator))
            value = operate(left.value, right.value) if operate is not None and (right.value or operate is not int.__floordiv__) else None
        sources = [s for s in (left.source, right.source) if not _literal(s)]
        return Count(value, sources[0] if sources else self.facts.describe(expr))

    def _builtin(self, call: cst.Call, scope: FunctionInfo, depth: int) -> Count | None:
        if not isinstance(call.func, cst.Name) or self.facts.imports.resolve(call.func) not in (None, call.func.value):
            return None
        if call.func.value == "len" and len(call.args) == 1:
            argument = call.args[0].value
            if isinstance(argument, cst.Name) and argument.value in scope.params and scope in self.signatures:
                return None  # len() of a tensor argument: tf.shape(x)[0] under AutoGraph
            return Count(None, f"'{self.facts.describe(call)}'")
        if call.func.value not in _INTEGER_BUILTINS or not call.args or any(arg.star or arg.keyword for arg in call.args):
            return None
        counts = [self.count(arg.value, scope, depth + 1) for arg in call.args]
        if any(count is None for count in counts):
            return None
        values = [count.value for count in counts]  # type: ignore[union-attr]
        known = None not in values and call.func.value in ("min", "max")
        value = (min if call.func.value == "min" else max)(values) if known else None  # type: ignore[type-var]
        return Count(value, next((c.source for c in counts if not _literal(c.source)), self.facts.describe(call)))  # type: ignore[union-attr]

    def _static_dim(self, expr: cst.Subscript, holder: cst.BaseExpression, scope: FunctionInfo) -> Count | None:
        """``x.shape[i]``: a Python integer in a traced function; for an argument of an
        input_signature, the dimension its spec gives (None there makes no Python integer)."""
        described = Count(None, f"the static shape '{self.facts.describe(expr)}'")
        if not (isinstance(holder, cst.Name) and holder.value in scope.params and scope in self.signatures):
            return described
        dim = _spec_dimension(self.signatures[scope], scope, holder.value, expr)
        if dim is _UNREADABLE:
            return described
        if isinstance(dim, cst.Integer):
            return Count(int_literal(dim), f"{dim.value}, the signature's '{self.facts.describe(expr)}'")
        return None  # a None dimension: no Python integer to loop over

    def _all(self, values: list[cst.BaseExpression], scope: FunctionInfo, depth: int, name: str) -> Count | None:
        """Every value ``name`` is bound to is a Python integer: the largest known one."""
        counts = [self.count(value, scope, depth + 1) for value in values]
        if not counts or any(count is None for count in counts):
            return None
        known = [count.value for count in counts]  # type: ignore[union-attr]
        value = max(known) if None not in known else None  # type: ignore[type-var]
        source = counts[0].source  # type: ignore[union-attr]
        return Count(value, f"'{name}' = {source}" if not source.startswith(f"'{name}'") else source)

    def _parameter(self, function: FunctionInfo, param: str, depth: int) -> Count | None:
        """A parameter every call of ``function`` in the file gives a Python integer for, or
        leaves at an integer default; for a constructor the file never calls, its integer default
        (a hyperparameter). None when the file makes no call of it."""
        default = _default(function, param)
        sites = _call_sites(self.facts, function) + self._wrapper_calls(function)
        if not sites:
            if function.name == "__init__" and isinstance(default, cst.Integer):
                return Count(int_literal(default), f"'{param}', its default {default.value}")
            return None
        counts, passed = [], False
        for call, caller in sites:
            argument = argument_for_parameter(call, function, param)
            if argument is None and any(arg.star for arg in call.args):
                return None
            passed = passed or argument is not None
            if argument is not None:
                count = self.count(argument, caller, depth + 1)
            else:
                count = self.count(default, function, depth + 1) if default is not None else None
            if count is None:
                return None
            counts.append(count)
        known = [count.value for count in counts]
        value = max(known) if None not in known else None  # type: ignore[type-var]
        if value is None:
            return Count(None, f"'{param}', {counts[0].source}")
        return Count(value, f"'{param}', {value} at every call" if passed and len(set(known)) == 1 else f"'{param}', {'up to ' if len(set(known)) > 1 else 'its default '}{value}")

    def _attribute(self, cls: ClassInfo, name: str, depth: int) -> Count | None:
        """``self.n`` that every method of the class sets to a Python integer, or a constant of
        the class body (``STEPS = 1000``)."""
        counts = []
        for method in cls.methods.values():
            info = self.facts.structure.functions.get(method)
            if info is None:
                continue
            for node in walk(method.body, into=not_into_scopes):
                if isinstance(node, cst.Assign) and any(dotted_name(t.target) == name for t in node.targets):
                    count = self.count(node.value, info, depth + 1)
                    if count is None:
                        return None
                    counts.append(count)
        attribute = name.split(".", 1)[1]
        for statement in cls.node.body.body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign) and any(dotted_name(t.target) == attribute for t in small.targets):
                        count = self.count(small.value, self.facts.structure.top, depth + 1)
                        if count is None:
                            return None
                        counts.append(count)
        if not counts:
            return None
        known = [count.value for count in counts]
        value = max(known) if None not in known else None  # type: ignore[type-var]
        return Count(value, f"'{name}' = {value}" if value is not None else f"'{name}', {counts[0].source}")

    def _wrapper_calls(self, function: FunctionInfo) -> list[tuple[cst.Call, FunctionInfo]]:
        """The calls of the name a ``tf.function(fn)`` call is bound to (``fast = tf.function(fn)``,
        then ``fast(x, 96)``): calls of ``fn``."""
        wrapper = self.wrappers.get(function)
        if wrapper is None:
            return []
        facts = self.facts
        names = [
            target.target.value
            for place in facts.index.assignments
            if isinstance(place.node, cst.Assign) and place.node.value is wrapper
            for target in place.node.targets
            if isinstance(target.target, cst.Name)
        ]
        return [
            (call, site.function(facts) or facts.structure.top)
            for name in names
            for site in facts.index.calls_named(name)
            if isinstance(call := site.node, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == name
        ]


#: A dimension :func:`_spec_dimension` could not read.
_UNREADABLE = object()


def _spec_dimension(signature: cst.BaseExpression, function: FunctionInfo, param: str, expr: cst.Subscript) -> object:
    """The dimension that ``param``'s ``tf.TensorSpec(shape, ...)`` in ``signature`` gives at the
    index of ``expr`` (``x.shape[-1]``): an Integer, ``None``'s Name, or :data:`_UNREADABLE`."""
    params = [p for p in function.params if not (function.is_method and p in ("self", "cls"))]
    if not isinstance(signature, (cst.List, cst.Tuple)) or param not in params or len(expr.slice) != 1:
        return _UNREADABLE
    position = params.index(param)
    index = expr.slice[0].slice
    if position >= len(signature.elements) or not isinstance(index, cst.Index):
        return _UNREADABLE
    spec = signature.elements[position].value
    shape = call_argument(spec, 0, "shape") if isinstance(spec, cst.Call) else None
    offset = index.value
    sign = -1 if isinstance(offset, cst.UnaryOperation) and isinstance(offset.operator, cst.Minus) else 1
    number = int_literal(offset.expression if sign < 0 else offset)  # type: ignore[attr-defined]
    if not isinstance(shape, (cst.List, cst.Tuple)) or number is None:
        return _UNREADABLE
    dims = [element.value for element in shape.elements]
    at = sign * number
    return dims[at] if -len(dims) <= at < len(dims) else _UNREADABLE


def _shape_holder(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` in ``x.shape[1]``, ``x.shape.as_list()[1]``, ``x.get_shape()[1]``: a dimension of a
    static shape, a Python integer (or None) in a traced function, unlike ``tf.shape(x)[1]``."""
    if not isinstance(expr, cst.Subscript):
        return None
    base = expr.value
    if _method_call(base, "as_list"):
        base = base.func.value  # type: ignore[attr-defined]
    if _method_call(base, "get_shape"):
        return base.func.value  # type: ignore[attr-defined]
    if isinstance(base, cst.Attribute) and base.attr.value == "shape":
        return base.value
    return None


def _method_call(expr: cst.BaseExpression, method: str) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == method


def _literal(source: str) -> bool:
    return source.lstrip("-").isdigit()


def _default(function: FunctionInfo, param: str) -> cst.BaseExpression | None:
    assert function.node is not None
    params = function.node.params
    for parameter in (*params.posonly_params, *params.params, *params.kwonly_params):
        if parameter.name.value == param:
            return parameter.default
    return None


def _call_sites(facts: ModuleFacts, function: FunctionInfo) -> list[tuple[cst.Call, FunctionInfo]]:
    """Where the file calls ``function``: its calls (methods through the objects the file builds),
    or, for ``__init__``, the constructions of its class."""
    if function.name == "__init__" and function.cls is not None:
        return [(call, statement.function) for call, statement in constructions(facts, function.cls)]
    return [(call, fact.function) for call, fact, callee in resolved_calls(facts) if callee is function]


# --- what the loop body does ------------------------------------------------------------------------
def _repeats_a_computation(facts: ModuleFacts, function: FunctionInfo, loop: cst.For) -> bool:
    """The body repeats one computation per iteration: a training step, a state carried to the
    next iteration, or the iteration's slice of a tensor the function is given; not a walk over
    layers (each iteration calls something the loop variable picks)."""
    index = names_read(loop.target)
    if _picks_callee(loop, index):
        return False
    return _trains(facts, function, loop, 0) or _carries_state(facts, loop) or _slices_input(facts, function, loop, index)


def _runs_a_callable(facts: ModuleFacts, function: FunctionInfo, scope: cst.CSTNode, depth: int) -> bool:
    """The body calls a model, a layer, or a function of the file that runs TensorFlow
    (``self.cell(x, state)``, ``model(x)``, ``self.train_step(x, y)``): each unrolled copy is that
    callable's whole graph. A body of TensorFlow ops (``c = c @ a``, ``tf.tanh(x)``) adds a few
    nodes per copy; a function of plain Python arithmetic adds none."""
    body = scope.body if isinstance(scope, (cst.For, cst.FunctionDef)) else scope
    for node in walk(body, into=not_into_scopes):
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        if isinstance(func, cst.Name) and func.value in _BUILTINS:
            continue
        if not isinstance(func, (cst.Name, cst.Attribute)) or dotted_name(func) is None:
            continue
        if facts.imports.resolve(func) is not None:
            continue  # a function of a package: tf.matmul, np.mean
        if isinstance(func, cst.Attribute) and func.attr.value in _VALUE_METHODS:
            continue
        callee = local_callee(node, function, facts)
        if callee is None or callee.node is None:
            return True  # an object: a layer, a model, a cell
        if depth < 2 and callee is not function and (_runs_a_callable(facts, callee, callee.node, depth + 1) or _runs_tensorflow(facts, callee.node)):
            return True
    return False


def _runs_tensorflow(facts: ModuleFacts, function: cst.FunctionDef) -> bool:
    """The function's own body calls a TensorFlow API."""
    return any(
        isinstance(node, cst.Call) and tf_api(facts.imports.resolve(node.func)) is not None
        for node in walk(function.body, into=not_into_scopes)
    )


def _picks_callee(loop: cst.For, index: set[str]) -> bool:
    """A call in the body whose callee the loop variable selects (``self.blocks[i](x)``,
    ``getattr(self, f"layer{i}")(x)``, ``block = self.blocks[i]`` then ``block(x)``)."""
    picked = set()
    for node in walk(loop.body, into=not_into_scopes):
        if isinstance(node, cst.Assign) and _selects(node.value, index):
            picked.update(name for target in node.targets for name in names_read(target.target))
    for node in walk(loop.body, into=not_into_scopes):
        if not isinstance(node, cst.Call):
            continue
        func = node.func.value if isinstance(node.func, cst.Attribute) else node.func
        if _selects(func, index) or (isinstance(func, cst.Name) and func.value in picked):
            return True
    return False


def _selects(expr: cst.BaseExpression, index: set[str]) -> bool:
    """``items[i]`` with the loop variable in the index, or ``getattr(obj, ...)``."""
    if isinstance(expr, cst.Subscript):
        return any(names_read(element) & index for element in expr.slice)
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "getattr"


def _carries_state(facts: ModuleFacts, loop: cst.For) -> bool:
    """A name the body binds from a call or an operation that reads it (``state = cell(x, state)``,
    ``x = x - dt * f(x)``)."""
    info = facts.structure.loops.get(loop)
    if info is not None and info.chained:
        return True
    for node in walk(loop.body, into=not_into_scopes):
        if isinstance(node, cst.Assign) and isinstance(node.value, (cst.Call, cst.BinaryOperation)):
            bound = {name for target in node.targets for name in names_read(target.target)}
            if bound & names_read(node.value):
                return True
    return False


def _slices_input(facts: ModuleFacts, function: FunctionInfo, loop: cst.For, index: set[str]) -> bool:
    """``x[b * size:(b + 1) * size]``, ``inputs[:, t]``: the iteration's slice of a tensor the
    traced function is given, or unpacks from what it is given (``x, y = data``); a slice or
    several indices: tensor indexing, not a list's item."""
    inputs = set(function.params)
    for node in walk(function.node.body, into=not_into_scopes):  # type: ignore[union-attr]
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Name) and node.value.value in function.params:
            inputs.update(name for target in node.targets for name in names_read(target.target))
    for node in walk(loop.body, into=not_into_scopes):
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value in inputs:
            tensor_like = len(node.slice) > 1 or any(isinstance(element.slice, cst.Slice) for element in node.slice)
            if tensor_like and any(names_read(element) & index for element in node.slice):
                return True
    return False


def _trains(facts: ModuleFacts, function: FunctionInfo, scope: cst.CSTNode, depth: int) -> bool:
    """``scope`` runs an optimizer step (``apply_gradients`` / ``minimize``, or a function of the
    file that does): a training step, not only a gradient (an adversarial attack's tape)."""
    body = scope.body if isinstance(scope, (cst.For, cst.FunctionDef)) else scope
    for node in walk(body, into=not_into_scopes):
        if not isinstance(node, cst.Call):
            continue
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _OPTIMIZER_METHODS:
            return True
        if depth < 2:
            callee = local_callee(node, function, facts)
            if callee is not None and callee is not function and callee.node is not None and _trains(facts, callee, callee.node, depth + 1):
                return True
    return False
