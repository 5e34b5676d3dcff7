"""LL501 keras-predict-in-loop: ``model.predict(x)`` on one item or batch per loop iteration.

This module also holds what LL502 and LL503 share about Keras: which calls build or load a
Keras model, which local classes and builder functions make one, and which names hold one. It
belongs in ``leaklint.analysis`` (a ``Role.MODEL`` with a framework) once the analysis models
TensorFlow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import libcst as cst

from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.structure import FunctionInfo, bound_names
from leaklint.analysis.walk import dotted_names_in, not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation
from leaklint.rules.ll402_empty_cache_in_loop import CallSites, Level, Place, loop_level, module_index

# ================================================================================================
# Shared helpers: Keras models
# ================================================================================================
KERAS_ROOTS = ("keras", "tensorflow.keras", "tensorflow.python.keras", "tf_keras")
TENSORFLOW_ROOTS = ("tensorflow", "keras", "tf_keras")
_MODEL_CLASSES = frozenset({"Model", "Sequential", "Functional"})
_MODEL_LOADERS = frozenset({"load_model", "model_from_json", "model_from_yaml", "model_from_config", "clone_model"})
#: Keyword arguments only Keras's ``Model.compile`` takes (``nn.Module.compile`` forwards to torch.compile).
_KERAS_COMPILE_KEYWORDS = frozenset({"optimizer", "loss", "metrics", "loss_weights", "run_eagerly", "steps_per_execution", "jit_compile"})


def is_keras_name(qualified: str | None) -> bool:
    return bool(qualified) and any(qualified == r or qualified.startswith(r + ".") for r in KERAS_ROOTS)  # type: ignore[union-attr]


def is_keras_model_factory(qualified: str | None) -> bool:
    """``keras.Sequential``, ``tf.keras.Model``, ``keras.models.load_model``, ``tf.keras.applications.ResNet50``..."""
    if not is_keras_name(qualified):
        return False
    leaf = qualified.rsplit(".", 1)[-1]  # type: ignore[union-attr]
    if leaf in _MODEL_CLASSES or leaf in _MODEL_LOADERS:
        return True
    return ".applications." in qualified and leaf[:1].isupper()  # type: ignore[operator]


def is_model_loader(qualified: str | None) -> bool:
    return is_keras_name(qualified) and qualified.rsplit(".", 1)[-1] in _MODEL_LOADERS  # type: ignore[union-attr]


@dataclass(frozen=True)
class KerasEvidence:
    confidence: Confidence
    why: str


@dataclass
class KerasModels:
    """What the file says about Keras models: classes, builders, and names that hold models."""

    facts: ModuleFacts
    classes: set[str] = field(default_factory=set)
    #: Local functions (module-level or methods, by name) that build and return a Keras model.
    builders: dict[str, cst.FunctionDef] = field(default_factory=dict)
    #: (scope, dotted name) -> evidence; scope is a FunctionDef, a ClassDef (for ``self.x``) or None.
    names: dict[tuple[cst.CSTNode | None, str], KerasEvidence] = field(default_factory=dict)
    #: Dotted names compiled with Keras-only arguments anywhere in the file.
    compiled: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, facts: ModuleFacts) -> KerasModels:
        models = cls(facts)
        models._find_classes()
        models._find_builders()
        models._find_names()
        return models

    # --- construction ------------------------------------------------------------------------
    def _find_classes(self) -> None:
        """Local subclasses of ``keras.Model`` (also through local bases)."""
        changed = True
        while changed:
            changed = False
            for info in self.facts.structure.classes.values():
                if info.name in self.classes:
                    continue
                for base in info.base_names:
                    qualified = self.facts.imports.qualify(base)
                    if base in self.classes or (is_keras_name(qualified) and qualified.rsplit(".", 1)[-1] in _MODEL_CLASSES):  # type: ignore[union-attr]
                        self.classes.add(info.name)
                        changed = True
                        break

    def _find_builders(self) -> None:
        """Functions whose own body constructs a Keras model and that return something."""
        for node, info in self.facts.structure.functions.items():
            if info.parent is not None:
                continue
            body = list(walk(node.body, into=not_into_scopes))
            builds = any(isinstance(n, cst.Call) and self.construction(n, builders=False) for n in body)
            returns = any(isinstance(n, cst.Return) and n.value is not None for n in body)
            if builds and returns:
                self.builders.setdefault(info.name, node)

    def construction(self, call: cst.Call, *, builders: bool = True) -> KerasEvidence | None:
        """Evidence that ``call`` returns a new Keras model (constructor, loader, class, builder)."""
        qualified = self.facts.imports.resolve(call.func)
        if is_keras_model_factory(qualified):
            return KerasEvidence(Confidence.HIGH, f"'{qualified}' returns a Keras model")
        func = call.func
        name = func.value if isinstance(func, cst.Name) else None
        if isinstance(func, cst.Attribute) and dotted_name(func.value) in ("self", "cls"):
            name = func.attr.value
        if name is None:
            return None
        if isinstance(func, cst.Name) and name in self.classes:
            return KerasEvidence(Confidence.HIGH, f"'{name}' subclasses keras.Model")
        if builders and name in self.builders:
            return KerasEvidence(Confidence.HIGH, f"'{name}()' builds a Keras model")
        return None

    def _find_names(self) -> None:
        index = module_index(self.facts)
        for place in index.calls_named("compile"):
            if isinstance(place.node.func, cst.Attribute):  # type: ignore[attr-defined]
                self._note_compile(place.node)  # type: ignore[arg-type]
        for _ in range(2):  # a second pass picks up aliases (m = model) bound before their source
            for place in index.assignments:
                node = place.node
                value = node.value  # type: ignore[attr-defined]
                if value is None:
                    continue
                evidence = self.expression(value, place)
                if evidence is None:
                    continue
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]  # type: ignore[attr-defined]
                for target in targets:
                    for name in bound_names(target):
                        self.names.setdefault((self._scope_key(place, name), name), evidence)

    def _note_compile(self, call: cst.Call) -> None:
        receiver = dotted_name(call.func.value)  # type: ignore[attr-defined]
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        strings = any(isinstance(a.value, cst.SimpleString) for a in call.args if a.keyword is None)
        if receiver and (keywords & _KERAS_COMPILE_KEYWORDS or strings):
            self.compiled.add(receiver)

    def _scope_key(self, place: Place, name: str) -> cst.CSTNode | None:
        info = place.function(self.facts)
        if name.startswith("self.") and info is not None and info.cls is not None:
            return info.cls.node
        scope = place.scope
        if not isinstance(scope, cst.FunctionDef) or name in _declared_global(scope):
            return None
        return scope

    # --- queries -----------------------------------------------------------------------------
    def expression(self, expr: cst.BaseExpression, place: Place) -> KerasEvidence | None:
        """Evidence that ``expr`` (evaluated at ``place``) is a Keras model."""
        if isinstance(expr, cst.Call):
            return self.construction(expr)
        name = dotted_name(expr)
        return self.name(name, place) if name else None

    def name(self, name: str, place: Place) -> KerasEvidence | None:
        """Evidence that the dotted ``name`` holds a Keras model where ``place`` runs."""
        info = place.function(self.facts)
        keys: list[cst.CSTNode | None] = []
        if isinstance(place.scope, cst.FunctionDef):
            keys.append(place.scope)
            parent = info.parent if info is not None else None
            while parent is not None:
                keys.append(parent.node)
                parent = parent.parent
        if name.startswith("self.") and info is not None and info.cls is not None:
            keys.append(info.cls.node)
        keys.append(None)
        for key in keys:
            found = self.names.get((key, name))
            if found is not None:
                return found
        if name in self.compiled:
            return KerasEvidence(Confidence.HIGH, f"'{name}.compile(...)' takes Keras arguments")
        return None

    def parameter(self, info: FunctionInfo, param: str, sites: CallSites) -> KerasEvidence | None:
        """Evidence that parameter ``param`` of ``info`` receives a Keras model at a call site."""
        if param not in info.params:
            return None
        position = info.params.index(param) - (1 if info.is_method else 0)
        for site in sites.of(info):
            call = site.node
            assert isinstance(call, cst.Call)
            passed = _argument(call, position, param)
            if passed is not None and self.expression(passed, site) is not None:
                return KerasEvidence(Confidence.MEDIUM, f"'{info.name}' is called with a Keras model as '{param}'")
        return None


def _declared_global(function: cst.FunctionDef) -> set[str]:
    """Names a function binds at module level (``global _MODEL; _MODEL = load_model(...)``)."""
    return {
        item.name.value
        for node in walk(function.body, into=not_into_scopes)
        if isinstance(node, cst.Global)
        for item in node.names
        if isinstance(item.name, cst.Name)
    }


def _argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    index = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg.value
            continue
        if index == position:
            return arg.value
        index += 1
    return None


def per_iteration_names(facts: ModuleFacts, loop: cst.CSTNode) -> set[str]:
    """Names a loop binds afresh every iteration (its target and what its body assigns)."""
    info = facts.structure.loops.get(loop)
    if info is not None:
        return set(info.rebound)
    if isinstance(loop, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
        names: set[str] = set()
        comp: cst.CompFor | None = loop.for_in
        while comp is not None:
            names.update(bound_names(comp.target))
            comp = comp.inner_for_in
        return names
    return set()


# ================================================================================================
# LL501
# ================================================================================================
#: An argument shaped like one sample: ``x[None]``, ``np.expand_dims(x, 0)``, ``x.reshape(1, -1)``, ``[x]``.
_SINGLE_ITEM_FUNCS = frozenset({"expand_dims", "newaxis", "array", "asarray", "reshape", "stack", "atleast_2d"})


def _looks_like_one_item(arg: cst.BaseExpression) -> bool:
    if isinstance(arg, cst.List) and len(arg.elements) == 1:
        return True
    for node in walk(arg):
        if isinstance(node, cst.Name) and node.value in ("None", "newaxis"):
            return True
        if isinstance(node, cst.Call):
            leaf = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
            if leaf in _SINGLE_ITEM_FUNCS:
                return True
    return False


class KerasPredictInLoop(Rule):
    code = "LL501"
    name = "keras-predict-in-loop"
    severity = Severity.LEAK
    summary = "A Keras model's predict() is called on one item or batch per loop iteration, which leaks memory in many TensorFlow versions."
    help = "call the model directly, model(x, training=False), or predict once on the whole array or dataset outside the loop"
    docs = """
## What it finds
`model.predict(x)` inside a `for` / `while` loop or a comprehension, where `x` changes every
iteration (it mentions the loop variable or something the loop body assigns), and `model` is a
Keras model as far as the file shows: it was built or loaded with `keras.Sequential`,
`keras.Model`, `tf.keras.models.load_model`, `tf.keras.applications.*`, a local subclass of
`keras.Model`, a local function that returns one, or it is compiled with Keras arguments
(`model.compile(optimizer=..., loss=...)`). Also `predict` on a function parameter inside a
helper that a loop calls with a Keras model (medium confidence).

Without Keras evidence nothing is reported: `predict` on a scikit-learn estimator or on a PyTorch
module's own method is not this problem. A loop that builds or fits the model it predicts with
(one `predict` per fold or per trial) is left to LL503.

## Why it matters
`predict` is built for large inputs: every call wraps its input in a `tf.data` pipeline, builds
or looks up a predict function, runs callbacks and a progress bar, and converts the result to
NumPy. Called once per sample or per batch in a Python loop, it is slow, and in many TensorFlow
2.x releases memory grows with every call until the process is killed (see the issues below).
The Keras documentation says `predict` "is not intended for use inside of loops that iterate over
your data and process small numbers of inputs at a time" and recommends calling the model.

## Example
```python
model = tf.keras.models.load_model("classifier.keras")
for path in image_paths:
    image = load_image(path)
    probs = model.predict(image[None])
```

## Use instead
```python
model = tf.keras.models.load_model("classifier.keras")
for path in image_paths:
    image = load_image(path)
    probs = model(image[None], training=False).numpy()
# or: probs = model.predict(np.stack([load_image(p) for p in image_paths]))
```

## Known false positives
A loop that calls `predict` on a large, changing array a handful of times (once per data shard)
pays little; suppress it with `# noqa: LL501`. leaklint cannot tell a Keras model passed in from
another module: such models are only found when the file builds, loads or compiles them, or
passes them to the helper that predicts.

## References
- `Model.predict` ("not intended for use inside of loops"):
  https://keras.io/api/models/model_training_apis/#predict-method
- Keras FAQ, the difference between `predict()` and `__call__()`:
  https://keras.io/getting_started/faq/#whats-the-difference-between-model-methods-predict-and-call
- Repeatedly calling `model.predict(...)` results in a memory leak:
  https://github.com/keras-team/keras/issues/13118
- Memory leak in `tf.keras.Model.predict`: https://github.com/tensorflow/tensorflow/issues/44711
- `predict()` in a loop consuming all RAM on TF 2.0: https://github.com/tensorflow/tensorflow/issues/33009
- Runtime repro: `leaklint verify LL501` (the runtime verifier arrives in a later release).
"""
    VALID = (
        # one call on the whole array, outside the loop; the model called directly in the loop
        """
import numpy as np
import tensorflow as tf
model = tf.keras.models.load_model("m.keras")
probs = model.predict(np.stack(images), batch_size=64)
for image in images:
    out = model(image[None], training=False)
""",
        # scikit-learn: no Keras evidence
        """
from sklearn.linear_model import LogisticRegression
import tensorflow as tf
clf = LogisticRegression().fit(X, y)
for row in X_test:
    label = clf.predict(row.reshape(1, -1))
""",
        # a PyTorch module with its own predict method
        """
import torch
class Net(torch.nn.Module):
    def predict(self, x):
        return self(x).argmax(-1)
net = Net()
for x, _ in loader:
    labels = net.predict(x)
""",
        # the same whole validation array every epoch
        """
from tensorflow import keras
model = keras.Sequential([keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
for epoch in range(10):
    model.fit(x_train, y_train, epochs=1)
    val_pred = model.predict(x_val)
""",
        # k-fold: one predict per freshly fitted model (LL503's business)
        """
from tensorflow import keras
for fold, (train_idx, val_idx) in enumerate(folds):
    model = keras.Sequential([keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(X[train_idx], y[train_idx])
    oof[val_idx] = model.predict(X[val_idx])
    keras.backend.clear_session()
""",
    )
    INVALID = (
        """
import tensorflow as tf
model = tf.keras.models.load_model("classifier.keras")
for path in image_paths:
    image = load_image(path)
    probs = model.predict(image[None])  # expect: LL501
""",
        """
import numpy as np
from keras.models import Sequential
from keras.layers import Dense
net = Sequential([Dense(10)])
scores = [net.predict(np.expand_dims(x, 0)) for x in samples]  # expect: LL501
""",
        """
import tensorflow as tf
class Classifier(tf.keras.Model):
    def call(self, x):
        return x
clf = Classifier()
while True:
    frame = camera.read()
    label = clf.predict(frame)  # expect: LL501
""",
        """
import tensorflow as tf
def classify(model, image):
    return model.predict(image[None])  # expect: LL501

model = tf.keras.applications.MobileNetV2(weights="imagenet")
for image in images:
    classify(model, image)
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        if not facts.imports.imports_anything_from(*TENSORFLOW_ROOTS):
            return

        places = [p for p in module_index(facts).calls_named("predict") if isinstance(p.node.func, cst.Attribute)]  # type: ignore[attr-defined]
        if not places:
            return
        sites = CallSites(facts)
        models = KerasModels.of(facts)
        for place in places:
            call = place.node
            assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
            found = self._per_item(facts, models, sites, place, call)
            if found is None:
                continue
            confidence, where = found
            yield Violation(
                node=call,
                message=(
                    f"'{facts.describe(call)}' runs Keras predict() {where}: each call builds a tf.data "
                    "pipeline and, in many TensorFlow versions, leaks memory"
                ),
                confidence=confidence,
                statement=place.statement(),
            )

    def _per_item(
        self, facts: ModuleFacts, models: KerasModels, sites: CallSites, place: Place, call: cst.Call
    ) -> tuple[Confidence, str] | None:
        receiver = call.func.value  # type: ignore[attr-defined]
        evidence = models.expression(receiver, place)
        arguments = [a.value for a in call.args if a.keyword is None][:1]
        if not arguments:
            return None
        mentioned = dotted_names_in(arguments[0])
        one_item = _looks_like_one_item(arguments[0])
        for index in reversed(place.loops):
            loop = place.chain[index]
            if not mentioned & per_iteration_names(facts, loop):
                continue
            if evidence is None or _refits(models, loop, dotted_name(receiver)):
                return None
            strong = one_item or loop_level(facts, loop) in (Level.STEP, Level.WEAK_STEP) or isinstance(loop, cst.While)
            confidence = evidence.confidence if strong else Confidence.MEDIUM
            return _weaker(confidence, evidence.confidence), "on every loop iteration"
        if place.loops:
            return None
        return self._in_helper(facts, models, sites, place, receiver, mentioned, evidence)

    @staticmethod
    def _in_helper(
        facts: ModuleFacts,
        models: KerasModels,
        sites: CallSites,
        place: Place,
        receiver: cst.BaseExpression,
        mentioned: set[str],
        evidence: KerasEvidence | None,
    ) -> tuple[Confidence, str] | None:
        """``predict`` on a parameter-derived input in a function a loop calls."""
        info = place.function(facts)
        if info is None or not mentioned & set(info.params):
            return None
        name = dotted_name(receiver)
        if evidence is None and name in info.params:
            evidence = models.parameter(info, name, sites)  # type: ignore[arg-type]
        if evidence is None:
            return None
        for site in sites.of(info):
            if _site_per_item(facts, models, site):
                return _weaker(Confidence.MEDIUM, evidence.confidence), f"on every call of '{info.name}', which a loop calls"
        return None


def _site_per_item(facts: ModuleFacts, models: KerasModels, site: Place) -> bool:
    """A call of the helper in a loop, on inputs that change every iteration, with a model the
    loop does not rebuild or refit (one call per fold is one predict per model)."""
    mentioned = set().union(*(dotted_names_in(a.value) for a in site.node.args))  # type: ignore[attr-defined]
    for index in reversed(site.loops):
        loop = site.chain[index]
        if mentioned & per_iteration_names(facts, loop):
            return not _refits(models, loop, None)
    return False


def _refits(models: KerasModels, loop: cst.CSTNode, receiver: str | None) -> bool:
    """The loop builds or trains the model it predicts with (any model when ``receiver`` is None):
    one predict per model, which is LL503's business."""
    for node in walk(loop.body if isinstance(loop, (cst.For, cst.While)) else loop):  # type: ignore[attr-defined]
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        fitting = isinstance(func, cst.Attribute) and func.attr.value in ("fit", "train_on_batch")
        if fitting and (receiver is None or dotted_name(func.value) == receiver):  # type: ignore[union-attr]
            return True
        if isinstance(func, (cst.Name, cst.Attribute)) and models.construction(node) is not None:
            return True
    return False


def _weaker(a: Confidence, b: Confidence) -> Confidence:
    return a if a <= b else b
