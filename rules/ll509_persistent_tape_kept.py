"""LL509 persistent-tape-kept: a persistent GradientTape made every step and kept by an object."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from leaklint.analysis.calls import caller_of
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.places import Place, walk_with_ancestors
from leaklint.analysis.structure import FunctionInfo, bound_names
from leaklint.analysis.syntax import keyword_is_true
from leaklint.analysis.iterations import few_runs
from leaklint.analysis.tensorflow import TfGraph, in_tf_function, tf_api, tf_graph
from leaklint.analysis.torch_api import LOOPS_OR_FUNCTIONS, TENSORFLOW_CODE, TENSORFLOW_ROOTS
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names
from leaklint.rule import Measured, Rule, Violation


class PersistentTapeKept(Rule):
    code = "LL509"
    name = "persistent-tape-kept"
    severity = Severity.PEAK
    summary = "A persistent GradientTape made every step is handed to an object that keeps it, and never deleted, so each step's recorded tensors outlive the step."
    help = "use a non-persistent tape and compute all gradients in one tape.gradient(...) call, or `del tape` after its last use and keep no reference to it"
    #: What a file must contain: TensorFlow, a persistent GradientTape, a loop or a function.
    needs = TENSORFLOW_CODE & Names("GradientTape") & Names("persistent") & LOOPS_OR_FUNCTIONS
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 0), leaks=(1, 0))
    docs = """
## What it finds
`with tf.GradientTape(persistent=True) as tape:` that runs every step (in a loop, or in a
function called from one), outside `tf.function`, where the tape is handed to something that
outlives the step — assigned to an attribute or a container (`self.tape = tape`,
`tapes.append(tape)`), or passed to a method of the file that stores it on its object
(`layer.set_tape(tape)` with `def set_tape(self, tape): self.tape = tape`) — and the function
never deletes it (`del tape`).

A local persistent tape that nothing else references is not reported: rebinding the name at the
next step frees it before the next step records anything.

## Why it matters
A non-persistent tape releases what it recorded as soon as `gradient()` is called. A persistent
tape keeps every recorded tensor (the step's activations, on the device) until the tape object
itself is freed. When an object keeps a reference to it, that moment moves to whenever the
object lets go — the next step at the earliest, never if it keeps a list: the peak grows by a
whole step's activations, or memory grows step after step. TensorFlow's documentation says to
drop the reference (`del tape`) once the gradients are computed.

## Example
```python
for ids, labels in batches:
    with tf.GradientTape(persistent=True) as tape:
        model.embedding.set_tape(tape)          # the layer keeps the tape
        loss = loss_fn(labels, model(ids))
    dense_grads = tape.gradient(loss, dense_vars)
    row_grads = model.embedding.row_gradients(loss)
```

## Use instead
```python
for ids, labels in batches:
    with tf.GradientTape() as tape:
        logits, rows = model(ids)
        tape.watch(rows)
        loss = loss_fn(labels, logits)
    *dense_grads, row_grads = tape.gradient(loss, dense_vars + [rows])
```

## Fix safety
No automatic fix: computing every gradient in one `gradient()` call, or deleting the tape after
its last use, means changing where the object that kept it uses it.

## Known false positives
A method resolved only by its name (the file defines one method of that name) may not be the one
the call runs. On bench/realcode the rule reports nothing: its persistent tapes (the autodiff
guides, CycleGAN's training step) are local variables of one step or cell.

## References
- `tf.GradientTape` ("the resources held by a GradientTape are released as soon as
  GradientTape.gradient() method is called... To compute multiple gradients over the same
  computation, create a persistent gradient tape... drop the reference to the tape"):
  https://www.tensorflow.org/api_docs/python/tf/GradientTape
- Memory growing in a loop of gradient tapes: https://github.com/tensorflow/tensorflow/issues/32276
- `del tape` clears the tape locally, while another reference keeps its memory:
  https://github.com/GPflow/GPflow/issues/1142
- Runtime repro: `leaklint verify LL509` measures the leaky and the fixed loop body.
"""
    VALID = (
        # local to the step and deleted after its last use
        """
import tensorflow as tf
for step in range(steps):
    with tf.GradientTape(persistent=True) as tape:
        u = net(x)
    du = tape.gradient(u, x)
    ddu = tape.gradient(du, x)
    del tape
""",
        # inside a tf.function: traced once, no Python tape lives between calls
        """
import tensorflow as tf
class Trainer:
    @tf.function
    def train_step(self, x):
        with tf.GradientTape(persistent=True) as tape:
            y = self.model(x)
        self.keep = tape
        return tape.gradient(y, x)
for x in dataset:
    trainer.train_step(x)
""",
        # not persistent
        """
import tensorflow as tf
for x, y in dataset:
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    recorder.tapes.append(tape)
""",
    )
    INVALID = (
        """
import tensorflow as tf
class Embedding(tf.keras.layers.Layer):
    def set_tape(self, tape):
        self.tape = tape
layer = Embedding()
for ids, labels in batches:
    with tf.GradientTape(persistent=True) as tape:  # expect: LL509
        layer.set_tape(tape)
        loss = loss_fn(labels, model(ids))
    grads = tape.gradient(loss, model.trainable_variables)
""",
        """
import tensorflow as tf
history = []
for x in dataset:
    with tf.GradientTape(persistent=True) as tape:  # expect: LL509
        y = model(x)
    history.append(tape)
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A persistent tape kept by an object between steps (the next step runs while the last
        one's tape and activations are alive), vs deleted after its last use."""

        requires = ("tensorflow",)
        tensors = False
        host_meter = "heap"

        def setup(self, ctx):
            import tensorflow as tf
            ctx.w = tf.Variable(tf.random.normal((256, 256)))
            ctx.x = tf.random.normal((256, 256))
            ctx.kept = None

        def leaky(self, ctx):
            import tensorflow as tf
            with tf.GradientTape(persistent=True) as tape:
                y = tf.tanh(tf.matmul(ctx.x, ctx.w))
            tape.gradient(y, ctx.w)
            ctx.kept = tape  # alive until the next step replaces it

        def fixed(self, ctx):
            import tensorflow as tf
            with tf.GradientTape(persistent=True) as tape:
                y = tf.tanh(tf.matmul(ctx.x, ctx.w))
            tape.gradient(y, ctx.w)
            del tape


# --- detection ------------------------------------------------------------------------------------
_TAPE = frozenset({"GradientTape"})
_STORING = frozenset({"append", "extend", "insert", "add", "setdefault"})


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    if not facts.imports.imports_anything_from(*TENSORFLOW_ROOTS):
        return
    tf = tf_graph(facts)
    for place in facts.index.calls_named("GradientTape"):
        call = place.node
        assert isinstance(call, cst.Call)
        if tf_api(facts.imports.resolve(call.func)) not in _TAPE or not keyword_is_true(call, "persistent"):
            continue
        item = place.parent
        if not isinstance(item, cst.WithItem) or item.asname is None or not isinstance(item.asname.name, cst.Name):
            continue
        name = item.asname.name.value
        function = caller_of(place, facts)
        if in_tf_function(facts, function):
            continue
        repeated = bool(place.loop_nodes) and not few_runs(facts, place.loop_nodes)
        if not repeated:
            found = tf.repeated.get(function)
            repeated = found is not None and found[0] is not Confidence.LOW
        if not repeated:
            continue
        region = function.node.body if function.node is not None else facts.module
        if _deleted(region, name):
            continue
        keeper = _escape(facts, tf, region, name)
        if keeper is None:
            continue
        yield Violation(
            node=call,
            message=(
                f"the persistent GradientTape '{name}' is kept by {keeper} and never deleted: a persistent tape "
                "holds every tensor it recorded until it is freed, so this step's activations stay alive "
                "after the step (into the next one)"
            ),
            confidence=Confidence.MEDIUM,
        )


def _deleted(region: cst.CSTNode, name: str) -> bool:
    return any(
        isinstance(node, cst.Del) and name in bound_names(node.target) for node in walk(region, into=not_into_scopes)
    )


def _escape(facts: ModuleFacts, tf: TfGraph, region: cst.CSTNode, name: str) -> str | None:
    """What keeps the tape beyond the step: an attribute (``self.tape = tape``), a container
    (``tapes.append(tape)``), or a method of the file that stores the argument on its object
    (``layer.set_tape(tape)`` with ``def set_tape(self, tape): self.tape = tape``)."""
    for node, path in walk_with_ancestors(region, lambda n: isinstance(n, (cst.Assign, cst.Call))):
        if isinstance(node, cst.Assign) and dotted_name(node.value) == name:
            for target in node.targets:
                if isinstance(target.target, (cst.Attribute, cst.Subscript)):
                    return f"'{facts.describe(target.target)}'"
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
            continue
        positions = [i for i, a in enumerate(node.args) if a.keyword is None and dotted_name(a.value) == name]
        if not positions or dotted_name(node.func.value) == name:
            continue
        if node.func.attr.value in _STORING:
            return f"'{facts.describe(node.func.value)}'"
        method = _method(facts, tf, node, Place(node, path))
        if method is not None and _stores_parameter(method, positions[0]):
            return f"'{facts.describe(node.func.value)}' (through '{method.name}')"
    return None


def _method(facts: ModuleFacts, tf: TfGraph, call: cst.Call, place: Place) -> FunctionInfo | None:
    """The local method ``obj.m(...)`` runs: resolved through the object's class, else the only
    method of that name in the file."""
    found = tf.callee(call, place)
    if found is not None:
        return found
    name = call.func.attr.value  # type: ignore[attr-defined]
    candidates = [info for info in facts.structure.functions.values() if info.is_method and info.name == name]
    return candidates[0] if len(candidates) == 1 else None


def _stores_parameter(method: FunctionInfo, position: int) -> bool:
    """The method assigns its ``position``-th argument to an attribute of ``self``."""
    params = method.params[1:] if method.is_method else method.params
    if position >= len(params) or method.node is None:
        return False
    param = params[position]
    for node in walk(method.node.body, into=not_into_scopes):
        if isinstance(node, cst.Assign) and dotted_name(node.value) == param:
            if any((dotted_name(t.target) or "").startswith("self.") for t in node.targets):
                return True
    return False
