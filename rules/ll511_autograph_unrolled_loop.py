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
from leaklint.analysis.calls import function_named, local_callee
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name, names_read
from leaklint.analysis.steps import resolved_calls
from leaklint.analysis.structure import ClassInfo, FunctionInfo, int_literal
from leaklint.analysis.tensorflow import has_input_signature, is_tf_function, tf_api
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
    #: What a file must contain: TensorFlow, ``tf.function``, and a ``for`` over ``range``.
    needs = TENSORFLOW_CODE & Names("function") & Names("range") & Syntax(ast.For)
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 2), leaks=(2, 0))
    docs = """
## What it finds
A `for` loop over `range(...)` written in the body of a function that `tf.function` traces (a
`@tf.function` decorator, or `tf.function(fn)` on a function of the file), when the loop's bound
is a Python integer while the function is traced:

- an integer literal, or arithmetic, `len()`, `int()`, `min()`/`max()` of such values;
- a dimension of a static shape (`x.shape[0]`: a Python `int` in a traced function, unlike
  `tf.shape(x)[0]`, which is a tensor);
- a parameter of the traced function that every call in the file passes such a value for (a
  literal, a name bound to one) or leaves at its integer default, when the `tf.function` has no
  `input_signature` (with one, every argument arrives as a tensor);
- an attribute `self.n` that the class sets to such a value (`self.max_len = max_len` with
  `max_len=120` in `__init__` and no construction passing anything else).

The loop is reported when its body repeats one computation: it runs a training step (a
`GradientTape`, `apply_gradients`, `minimize`, or a function of the file that does), carries a
state from one iteration to the next (`state = cell(x, state)`, `tokens = decode(tokens)`), or
takes the loop's slice of a tensor the function is given (`x[b * size:(b + 1) * size]`,
`inputs[:, t]`). It stays quiet for loops over a model's layers (`self.blocks[i](x)`,
`getattr(self, f"layer{i}")`: each iteration runs different weights, the graph has that size
anyway), for bounds that literals keep to 20 iterations or fewer in all (`range(4)`), for bounds
it cannot show to be Python integers (a tensor, a value of another file, a config field), and for
loops over anything but `range` (`tf.range`, a dataset, a tensor: AutoGraph turns those into a
`tf.while_loop`).

Confidence is high when the loops run a training step or literals say they run more than 20
times; medium when the count comes from a shape or `len()`.

A loop that runs a training step inside the traced function (the whole epoch or batch loop under
one `tf.function`) is reported at the `tf.function` decorator or call: the line to change is the
one that traces too much. Any other loop is reported at its `for`.

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
Unrolling on purpose: a short loop whose speed matters more than the graph's size (unrolled loops
run faster than a `tf.while_loop` once traced) with a bound literals do not show, such as a
configured number of refinement steps. Suppress it with `# noqa: LL511`. Measured on
bench/realcode (90 repositories, 714 TensorFlow files): no finding; its `tf.function`s loop over
`tf.range`, datasets or a handful of literal iterations.

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
        keeps every trace. Leaky: the step loop over ``range(64)`` is unrolled, 64 copies of the
        step in each trace. Fixed: ``tf.range(64)``, one ``tf.while_loop`` per trace."""

        requires = ("tensorflow",)
        tensors = False
        host_meter = "heap"

        def setup(self, ctx):
            import tensorflow as tf

            weights = tf.Variable(tf.random.normal((32, 32)) * 0.1)

            @tf.function
            def unrolled(x):
                for _ in range(64):  # noqa: LL511 (the leaky variant)
                    x = tf.tanh(tf.matmul(x, weights))
                return x

            @tf.function
            def rolled(x):
                for _ in tf.range(64):
                    x = tf.tanh(tf.matmul(x, weights))
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
#: Builtins whose result is a Python integer when their arguments are.
_INTEGER_BUILTINS = frozenset({"int", "min", "max", "abs", "round"})
#: Calls and methods that run a training step.
_TRAINING_METHODS = frozenset({"apply_gradients", "minimize"})
#: How deep names, callers and callees are followed.
_MAX_DEPTH = 4
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
class _Nest:
    """An unrolled loop and the unrolled loops inside it, with their bounds."""

    loop: cst.For
    counts: tuple[Count, ...]
    trains: bool

    @property
    def total(self) -> int | None:
        total = 1
        for count in self.counts:
            if count.value is None:
                return None
            total *= count.value
        return total


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    if not facts.imports.imports_anything_from(*TENSORFLOW_ROOTS):
        return
    for function, wrapper in traced_functions(facts).items():
        yield from _unrolled_in(facts, function, wrapper)


def traced_functions(facts: ModuleFacts) -> dict[FunctionInfo, cst.BaseExpression]:
    """Functions of the file that ``tf.function`` traces, with the decorator or the
    ``tf.function(fn)`` call that does it."""
    found: dict[FunctionInfo, cst.BaseExpression] = {}
    for info in facts.structure.functions.values():
        if info.node is None:
            continue
        wrapper = next((d.decorator for d in info.node.decorators if is_tf_function(facts, d.decorator)), None)
        if wrapper is not None:
            found[info] = wrapper
    for place in facts.index.calls_named("function"):
        call = place.node
        assert isinstance(call, cst.Call)
        if not is_tf_function(facts, call) or not call.args or call.args[0].keyword is not None:
            continue
        target = call.args[0].value
        scope = place.function(facts) or facts.structure.top
        node: cst.FunctionDef | None = None
        if isinstance(target, cst.Name):
            node = function_named(target.value, scope, facts)
        elif dotted_name(target) is not None and dotted_name(target).startswith("self.") and scope.cls is not None:  # type: ignore[union-attr]
            node = scope.cls.find_method(target.attr.value)  # type: ignore[attr-defined]
        info = facts.structure.functions.get(node) if node is not None else None
        if info is not None:
            found.setdefault(info, call)
    return found


def _unrolled_in(facts: ModuleFacts, function: FunctionInfo, wrapper: cst.BaseExpression) -> Iterator[Violation]:
    """One violation per outermost unrolled loop nest of ``function`` that repeats a computation;
    one at the ``tf.function`` itself for the nests that run a training step."""
    assert function.node is not None
    reader = _Bounds(facts, has_input_signature(wrapper), wrapper)
    unrolled: dict[cst.For, Count] = {}
    for node in walk(function.node.body, into=not_into_scopes):
        if isinstance(node, cst.For) and _iterates_range(facts, node):
            count = reader.count(_range_stop(node.iter), function)  # type: ignore[arg-type]
            if count is not None:
                unrolled[node] = count
    nests = []
    for loop in unrolled:
        if any(other is not loop and _contains(other, loop) for other in unrolled):
            continue  # judged with the loop around it
        inner = [loop] + [other for other in unrolled if _contains(loop, other)]
        if not any(_repeats_a_computation(facts, function, other) for other in inner):
            continue
        nest = _Nest(loop, tuple(unrolled[other] for other in inner), any(_trains(facts, function, other, 0) for other in inner))
        if nest.total is not None and nest.total <= FEW_STEPS:
            continue
        nests.append(nest)
    training = [nest for nest in nests if nest.trains]
    if training:
        yield _training_violation(facts, function, wrapper, training)
    for nest in nests:
        if not nest.trains:
            yield _loop_violation(facts, function, nest)


def _loop_violation(facts: ModuleFacts, function: FunctionInfo, nest: _Nest) -> Violation:
    count = nest.counts[0]
    copies = f"{nest.total} copies" if nest.total is not None else "one copy per iteration"
    inner = f" (with the {len(nest.counts) - 1} unrolled loop(s) inside it)" if len(nest.counts) > 1 else ""
    confidence = Confidence.HIGH if nest.total is not None else Confidence.MEDIUM
    return Violation(
        node=nest.loop,
        message=(
            f"'for ... in {facts.describe(nest.loop.iter)}'{inner} runs in Python while tf.function traces "
            f"'{function.name}': its bound is a Python integer ({count.source}), not a tensor, so AutoGraph unrolls "
            f"it and the graph holds {copies} of the loop body, kept as long as the function, and built again for "
            "every retrace"
        ),
        confidence=confidence,
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


def _iterates_range(facts: ModuleFacts, loop: cst.For) -> bool:
    """``for i in range(...)``: the builtin, not a ``range`` of a module or the file."""
    iterable = loop.iter
    return (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Name)
        and iterable.func.value == "range"
        and facts.imports.resolve(iterable.func) in (None, "range")
        and "range" not in facts.structure.module_functions
        and bool(iterable.args)
        and not any(arg.star for arg in iterable.args)
    )


def _range_stop(call: cst.Call) -> cst.BaseExpression:
    """The bound of ``range(stop)`` / ``range(start, stop[, step])``."""
    return call.args[1].value if len(call.args) > 1 else call.args[0].value


def _contains(outer: cst.For, inner: cst.For) -> bool:
    return any(node is inner for node in walk(outer.body, into=not_into_scopes))


# --- which bounds are Python integers ---------------------------------------------------------------
class _Bounds:
    """Reads whether an expression is a Python integer while a traced function runs."""

    def __init__(self, facts: ModuleFacts, signature: bool, wrapper: cst.BaseExpression) -> None:
        self.facts = facts
        self.signature = signature
        self.wrapper = wrapper

    def count(self, expr: cst.BaseExpression, scope: FunctionInfo, depth: int = 0, traced: bool = True) -> Count | None:
        """A :class:`Count` when ``expr`` (read in ``scope``) is a Python integer; None when it
        is a tensor or the file does not show it. ``traced``: ``scope`` is the traced function
        itself (its parameters are tensors under an ``input_signature``)."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Integer):
            return Count(int_literal(expr), expr.value)
        if isinstance(expr, cst.BinaryOperation):
            return self._arithmetic(expr, scope, depth, traced)
        if isinstance(expr, cst.Call):
            return self._builtin(expr, scope, depth, traced)
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
            return Count(None, f"the static shape '{self.facts.describe(expr)}'")
        name = dotted_name(expr)
        if name is None:
            return None
        if "." not in name:
            if name in scope.params:
                if traced and self.signature:
                    return None
                return self._parameter(scope, name, depth)
            return self._all(self.facts.index.visible_values(scope, name), scope, depth, traced, name)
        if name.count(".") == 1 and name.startswith("self.") and scope.cls is not None:
            return self._attribute(scope.cls, name, depth)
        return None

    def _arithmetic(self, expr: cst.BinaryOperation, scope: FunctionInfo, depth: int, traced: bool) -> Count | None:
        left = self.count(expr.left, scope, depth + 1, traced)
        right = self.count(expr.right, scope, depth + 1, traced) if left is not None else None
        if left is None or right is None:
            return None
        value = None
        if left.value is not None and right.value is not None:
            operators = {cst.Add: int.__add__, cst.Subtract: int.__sub__, cst.Multiply: int.__mul__, cst.FloorDivide: int.__floordiv__}
            operate = operators.get(type(expr.operator))
            value = operate(left.value, right.value) if operate is not None and (right.value or operate is not int.__floordiv__) else None
        sources = [s for s in (left.source, right.source) if not s.isdigit()]
        return Count(value, sources[0] if sources else self.facts.describe(expr))

    def _builtin(self, call: cst.Call, scope: FunctionInfo, depth: int, traced: bool) -> Count | None:
        if not isinstance(call.func, cst.Name) or self.facts.imports.resolve(call.func) not in (None, call.func.value):
            return None
        if call.func.value == "len" and len(call.args) == 1:
            return Count(None, f"'{self.facts.describe(call)}'")
        if call.func.value not in _INTEGER_BUILTINS or not call.args or any(arg.star or arg.keyword for arg in call.args):
            return None
        counts = [self.count(arg.value, scope, depth + 1, traced) for arg in call.args]
        if any(count is None for count in counts):
            return None
        values = [count.value for count in counts]  # type: ignore[union-attr]
        known = None not in values and call.func.value in ("min", "max")
        value = (min if call.func.value == "min" else max)(values) if known else None  # type: ignore[type-var]
        return Count(value, next((c.source for c in counts if not c.source.isdigit()), self.facts.describe(call)))  # type: ignore[union-attr]

    def _all(self, values: list[cst.BaseExpression], scope: FunctionInfo, depth: int, traced: bool, name: str) -> Count | None:
        """Every value ``name`` is bound to is a Python integer: the largest known one."""
        counts = [self.count(value, scope, depth + 1, traced) for value in values]
        if not counts or any(count is None for count in counts):
            return None
        known = [count.value for count in counts]  # type: ignore[union-attr]
        value = max(known) if None not in known else None  # type: ignore[type-var]
        source = counts[0].source  # type: ignore[union-attr]
        return Count(value, f"'{name}' = {source}" if not source.startswith(f"'{name}'") else source)

    def _parameter(self, function: FunctionInfo, param: str, depth: int) -> Count | None:
        """A parameter every call of ``function`` in the file gives a Python integer for, or
        leaves at an integer default; None when the file makes no call of it."""
        default = _default(function, param)
        sites = _call_sites(self.facts, function) + _wrapper_calls(self.facts, self.wrapper)
        if not sites:
            return None
        counts = []
        for call, caller in sites:
            argument = argument_for_parameter(call, function, param)
            if argument is None and any(arg.star for arg in call.args):
                return None
            if argument is None:
                count = self.count(default, function, depth + 1, traced=False) if default is not None else None
            else:
                count = self.count(argument, caller, depth + 1, traced=False)
            if count is None:
                return None
            counts.append(count)
        known = [count.value for count in counts]
        value = max(known) if None not in known else None  # type: ignore[type-var]
        literal = value is not None and all(count.source.isdigit() for count in counts)
        return Count(value, f"'{param}', {value} at every call" if literal else f"'{param}', {counts[0].source}")

    def _attribute(self, cls: ClassInfo, name: str, depth: int) -> Count | None:
        """``self.n`` that every method of the class sets to a Python integer."""
        counts = []
        for method in cls.methods.values():
            info = self.facts.structure.functions.get(method)
            if info is None:
                continue
            for node in walk(method.body, into=not_into_scopes):
                if isinstance(node, cst.Assign) and any(dotted_name(t.target) == name for t in node.targets):
                    count = self.count(node.value, info, depth + 1, traced=False)
                    if count is None:
                        return None
                    counts.append(count)
        if not counts:
            return None
        known = [count.value for count in counts]
        value = max(known) if None not in known else None  # type: ignore[type-var]
        return Count(value, f"'{name}' = {value}" if value is not None else f"'{name}', {counts[0].source}")


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
        cls = function.cls
        sites = []
        for place in facts.index.calls_named(cls.name):
            call = place.node
            assert isinstance(call, cst.Call)
            if isinstance(call.func, cst.Name) and facts.structure.classes_by_name.get(call.func.value) is cls:
                sites.append((call, place.function(facts) or facts.structure.top))
        return sites
    return [(call, fact.function) for call, fact, callee in resolved_calls(facts) if callee is function]


def _wrapper_calls(facts: ModuleFacts, wrapper: cst.BaseExpression) -> list[tuple[cst.Call, FunctionInfo]]:
    """The calls of the name a ``tf.function(fn)`` call is bound to (``fast = tf.function(fn)``,
    then ``fast(x, 96)``): calls of ``fn``."""
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


# --- what the loop body does ------------------------------------------------------------------------
def _repeats_a_computation(facts: ModuleFacts, function: FunctionInfo, loop: cst.For) -> bool:
    """The body repeats one computation per iteration: a training step, a state carried to the
    next iteration, or the iteration's slice of a tensor the function is given; not a walk over
    layers (each iteration calls something the loop variable picks)."""
    index = names_read(loop.target)
    if _picks_callee(loop, index) or not _runs_a_callable(facts, loop):
        return False
    return _trains(facts, function, loop, 0) or _carries_state(facts, loop) or _slices_input(function, loop, index)


def _runs_a_callable(facts: ModuleFacts, loop: cst.For) -> bool:
    """The body calls a model, a layer or a function of the file (``self.cell(x, state)``,
    ``model(x)``, ``self.train_step(x, y)``): each unrolled copy is that callable's whole graph. A
    body of TensorFlow ops on tensors (``c = c @ a``, ``tf.tanh(x)``) adds a few nodes per copy."""
    for node in walk(loop.body, into=not_into_scopes):
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
        return True
    return False


def _picks_callee(loop: cst.For, index: set[str]) -> bool:
    """A call in the body whose callee the loop variable selects (``self.blocks[i](x)``,
    ``getattr(self, f"layer{i}")(x)``, ``layers[i].call(x)``)."""
    for node in walk(loop.body, into=not_into_scopes):
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        if isinstance(func, cst.Attribute):
            func = func.value
        if isinstance(func, cst.Subscript) and any(names_read(element) & index for element in func.slice):
            return True
        if isinstance(func, cst.Call) and isinstance(func.func, cst.Name) and func.func.value == "getattr":
            return True
    return False


def _carries_state(facts: ModuleFacts, loop: cst.For) -> bool:
    """A name the body binds from a call that reads it (``state = cell(x, state)``)."""
    info = facts.structure.loops.get(loop)
    if info is not None and info.chained:
        return True
    for node in walk(loop.body, into=not_into_scopes):
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
            bound = {name for target in node.targets for name in names_read(target.target)}
            if bound & names_read(node.value):
                return True
    return False


def _slices_input(function: FunctionInfo, loop: cst.For, index: set[str]) -> bool:
    """``x[b * size:(b + 1) * size]``, ``inputs[:, t]``: the iteration's part of a tensor the
    traced function is given."""
    for node in walk(loop.body, into=not_into_scopes):
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value in function.params:
            if any(names_read(element) & index for element in node.slice):
                return True
    return False


def _trains(facts: ModuleFacts, function: FunctionInfo, scope: cst.CSTNode, depth: int) -> bool:
    """``scope`` runs a training step: a ``GradientTape``, ``apply_gradients`` / ``minimize``, or
    a function of the file that does."""
    body = scope.body if isinstance(scope, (cst.For, cst.FunctionDef)) else scope
    for node in walk(body, into=not_into_scopes):
        if not isinstance(node, cst.Call):
            continue
        if tf_api(facts.imports.resolve(node.func)) == "GradientTape":
            return True
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _TRAINING_METHODS:
            return True
        if depth < 2:
            callee = local_callee(node, function, facts)
            if callee is not None and callee is not function and callee.node is not None and _trains(facts, callee, callee.node, depth + 1):
                return True
    return False
