"""LL507 keras-callback-keeps-outputs: a Keras callback keeping every batch's or epoch's model outputs."""

from __future__ import annotations

import ast
import re
from typing import Iterator

import libcst as cst

from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.keras import is_keras_callback_hook
from leaklint.analysis.names import dotted_name, dotted_names_in
from leaklint.analysis.structure import FunctionInfo, bound_names
from leaklint.analysis.syntax import subscript_base
from leaklint.analysis.tensorflow import is_op_api, returns_collection
from leaklint.analysis.torch_api import TENSORFLOW_CODE, TENSORFLOW_ROOTS
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names, Syntax
from leaklint.rule import Measured, Rule, Violation


class KerasCallbackKeepsOutputs(Rule):
    code = "LL507"
    name = "keras-callback-keeps-outputs"
    severity = Severity.LEAK
    summary = "A Keras callback adds model outputs to a list or dict on itself every batch or epoch and never empties it."
    help = "keep what you need from the outputs (a metric, a count, the best array written to disk), or empty the list at the start of each epoch"
    #: What a file must contain: TensorFlow or Keras and a class deriving from a Keras callback.
    needs = TENSORFLOW_CODE & Names("Callback", "TensorBoard", "ModelCheckpoint") & Syntax(ast.ClassDef)
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 0), leaks=(1, 0))
    docs = """
## What it finds
A per-batch or per-epoch hook of a `keras.callbacks.Callback` subclass (`on_epoch_end`,
`on_train_batch_end`...) that stores model outputs on the callback — `self.x.append(out)`,
`self.x += [out]`, `self.x[epoch] = out` — where `out` is what `self.model.predict(...)` or
`self.model(...)` returned, a TensorFlow op's result, or an array made from them (`.numpy()`,
`.ravel()`, a slice), and no method other than `__init__` ever empties or replaces `self.x`.
High confidence in a per-batch hook, medium in a per-epoch one.

Floats and small Python values (`self.losses.append(logs["loss"])`) are not reported.

## Why it matters
A callback lives as long as the training run, and so does everything it keeps. One validation
prediction array per epoch, or one batch of outputs per step, adds up to the whole run's outputs:
a million-row validation set kept over 300 epochs is a quarter of a billion floats. Memory grows
epoch after epoch until the job is killed, although only the current epoch's outputs (or a
number computed from them) were ever needed.

## Example
```python
class ValidationAUC(tf.keras.callbacks.Callback):
    def __init__(self, x_val, y_val):
        super().__init__()
        self.x_val, self.y_val = x_val, y_val
        self.epoch_predictions = []

    def on_epoch_end(self, epoch, logs=None):
        predictions = self.model.predict(self.x_val, verbose=0).ravel()
        self.epoch_predictions.append(predictions)
        logs["val_auc"] = roc_auc_score(self.y_val, predictions)
```

## Use instead
```python
class ValidationAUC(tf.keras.callbacks.Callback):
    def __init__(self, x_val, y_val):
        super().__init__()
        self.x_val, self.y_val = x_val, y_val
        self.auc_history = []

    def on_epoch_end(self, epoch, logs=None):
        predictions = self.model.predict(self.x_val, verbose=0).ravel()
        auc = roc_auc_score(self.y_val, predictions)
        self.auc_history.append(auc)          # one float per epoch
        logs["val_auc"] = auc
```

## Fix safety
No automatic fix: what to keep instead of the outputs (a metric, a running count, the best
epoch's array on disk) is the author's choice.

## Known false positives
A callback that keeps every epoch's outputs on purpose, for a short run, is reported too;
suppress with `# noqa: LL507`. A list emptied by a helper function of another module is not
seen. On bench/realcode the rule reports nothing.

## References
- Keras callbacks: a callback object lives for the whole `fit()` call and across calls:
  https://keras.io/guides/writing_your_own_callbacks/
- A scoring callback keeping every epoch's predictions uses up the memory:
  https://github.com/skorch-dev/skorch/issues/509 (the same pattern in skorch, on the GPU)
- Predictions accumulated over a whole run instead of handed out per batch:
  https://github.com/keras-team/keras/pull/21673
- Runtime repro: `leaklint verify LL507` measures the leaky and the fixed loop body.
"""
    VALID = (
        # one float per epoch
        """
import tensorflow as tf
class History(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses = []
    def on_epoch_end(self, epoch, logs=None):
        self.losses.append(logs["loss"])
""",
        # emptied at the start of every epoch
        """
import tensorflow as tf
class BatchOutputs(tf.keras.callbacks.Callback):
    def __init__(self, probe):
        super().__init__()
        self.probe = probe
        self.outputs = []
    def on_epoch_begin(self, epoch, logs=None):
        self.outputs = []
    def on_train_batch_end(self, batch, logs=None):
        self.outputs.append(self.model(self.probe, training=False).numpy())
""",
        # not a Keras callback
        """
import tensorflow as tf
class Recorder:
    def on_epoch_end(self, epoch, model, x):
        self.kept.append(model.predict(x))
""",
    )
    INVALID = (
        """
import tensorflow as tf
class ValidationAUC(tf.keras.callbacks.Callback):
    def __init__(self, x_val):
        super().__init__()
        self.x_val = x_val
        self.epoch_predictions = []
    def on_epoch_end(self, epoch, logs=None):
        predictions = self.model.predict(self.x_val, verbose=0).ravel()
        self.epoch_predictions.append(predictions)  # expect: LL507
""",
        """
from tensorflow import keras
class ProbeOutputs(keras.callbacks.Callback):
    def __init__(self, probe):
        super().__init__()
        self.probe = probe
        self.by_batch = {}
    def on_train_batch_end(self, batch, logs=None):
        self.by_batch[batch] = self.model(self.probe, training=False).numpy()  # expect: LL507
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A callback-like object keeping each epoch's prediction array, vs keeping one float per
        epoch (the arrays stand for `model.predict` outputs; NumPy only, so it runs without TensorFlow)."""

        requires = ("numpy",)
        tensors = False
        host_meter = "heap"

        def setup(self, ctx):
            import numpy as np
            ctx.rng = np.random.default_rng(0)
            ctx.kept = []

        def leaky(self, ctx):
            predictions = ctx.rng.random(50_000)
            ctx.kept.append(predictions)

        def fixed(self, ctx):
            predictions = ctx.rng.random(50_000)
            ctx.kept.append(float(predictions.mean()))


# --- detection ------------------------------------------------------------------------------------
_BATCH_HOOK = re.compile(r"^on_(train_|test_|predict_)?batch_(begin|end)$")
_STORING = frozenset({"append", "extend", "insert"})
#: Keras model methods whose result is an array of outputs.
_OUTPUT_METHODS = frozenset({"predict", "predict_on_batch", "__call__", "call"})
#: Wrappers that keep an array an array.
_ARRAY_PRESERVING = frozenset({"numpy", "ravel", "flatten", "squeeze", "reshape", "astype", "copy", "argmax", "round"})


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    if not facts.imports.imports_anything_from(*TENSORFLOW_ROOTS):
        return
    for info in facts.structure.functions.values():
        if not is_keras_callback_hook(facts, info):
            continue
        assert info.node is not None and info.cls is not None
        reset = _reset_attributes(info.cls)
        arrays = _array_names(facts, info)
        for node in walk(info.node.body, into=not_into_scopes):
            found = _stored(facts, info, node, arrays)
            if found is None:
                continue
            attribute, value = found
            if attribute in reset:
                continue
            per_batch = bool(_BATCH_HOOK.match(info.name))
            yield Violation(
                node=node,
                message=(
                    f"'{facts.describe(value)}' (model outputs) is added to '{attribute}' on every call of the "
                    f"Keras callback hook '{info.name}' (every {'batch' if per_batch else 'epoch'}), and nothing "
                    "ever empties it: the callback keeps every output of the whole training run"
                ),
                confidence=Confidence.HIGH if per_batch else Confidence.MEDIUM,
            )


def _reset_attributes(cls: object) -> set[str]:
    """Attributes a method other than ``__init__`` empties or replaces (``self.x = []``, ``self.x.clear()``)."""
    found: set[str] = set()
    for name, method in cls.methods.items():  # type: ignore[attr-defined]
        if name == "__init__":
            continue
        for node in walk(method.body, into=not_into_scopes):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    found.update(n for n in bound_names(target.target) if n.startswith("self."))
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("clear", "pop", "popleft"):
                receiver = dotted_name(node.func.value)
                if receiver:
                    found.add(receiver)
            elif isinstance(node, cst.Del):
                for target in walk(node.target):
                    base = subscript_base(target) if isinstance(target, cst.Subscript) else None
                    if base:
                        found.add(base)
    return found


def _array_names(facts: ModuleFacts, info: FunctionInfo) -> set[str]:
    """Names the hook binds to model outputs (or arrays made from them)."""
    assert info.node is not None
    names: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in walk(info.node.body, into=not_into_scopes):
            if isinstance(node, cst.Assign) and _is_output(facts, info, node.value, names):
                for target in node.targets:
                    for name in bound_names(target.target):
                        if name not in names:
                            names.add(name)
                            changed = True
    return names


def _is_output(facts: ModuleFacts, info: FunctionInfo, expr: cst.BaseExpression, names: set[str]) -> bool:
    """Model outputs: ``self.model.predict(x)``, ``self.model(x)``, a TensorFlow op's result, and
    ``.numpy()`` / ``.ravel()`` / slices of them."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _ARRAY_PRESERVING:
            expr = expr.func.value
        else:
            break
    if isinstance(expr, cst.Name):
        return expr.value in names
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    if dotted_name(func) == "self.model":
        return True
    if isinstance(func, cst.Attribute) and func.attr.value in _OUTPUT_METHODS and dotted_name(func.value) == "self.model":
        return True
    qualified = facts.imports.resolve(func)
    return is_op_api(qualified) and not returns_collection(qualified)


def _stored(
    facts: ModuleFacts, info: FunctionInfo, node: cst.CSTNode, arrays: set[str]
) -> tuple[str, cst.BaseExpression] | None:
    """``self.x.append(out)``, ``self.x += [out]``, ``self.x[epoch] = out``: an output kept on the callback."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _STORING:
        receiver = dotted_name(node.func.value)
        if receiver and receiver.startswith("self.") and node.args:
            value = node.args[-1].value
            if _is_output(facts, info, value, arrays):
                return receiver, value
    if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign):
        receiver = dotted_name(node.target)
        if receiver and receiver.startswith("self.") and isinstance(node.value, (cst.List, cst.Tuple)):
            for element in node.value.elements:
                if _is_output(facts, info, element.value, arrays):
                    return receiver, element.value
    if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Subscript):
        target = node.targets[0].target
        base = subscript_base(target)
        key = target.slice[0].slice if len(target.slice) == 1 else None
        params = set(info.params) - {"self", "logs"}
        if (
            base and base.startswith("self.") and isinstance(key, cst.Index)
            and dotted_names_in(key.value) & params and _is_output(facts, info, node.value, arrays)
        ):
            return base, node.value
    return None
