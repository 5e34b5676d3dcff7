"""LL501 keras-predict-in-loop: ``model.predict(x)`` on one item or batch per loop iteration."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from leaklint.analysis.calls import CallGraph, call_graph
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.syntax import call_argument
from leaklint.analysis.keras import KerasEvidence, KerasModels, keras_models
from leaklint.analysis.names import dotted_name, dotted_names_in, names_read
from leaklint.analysis.places import Level, Place, loop_level, per_iteration_names, walk_with_ancestors
from leaklint.analysis.structure import FunctionInfo, bound_names
from leaklint.analysis.torch_api import TENSORFLOW_CODE, TENSORFLOW_ROOTS
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names
from leaklint.rule import Measured, Rule, Violation


class KerasPredictInLoop(Rule):
    code = "LL501"
    name = "keras-predict-in-loop"
    severity = Severity.LEAK
    summary = (
        "A Keras model's predict() is called on one item or batch per loop iteration, or its fit() on one batch "
        "of an array the loop walks, which leaks memory in many TensorFlow versions."
    )
    help = (
        "call the model directly, model(x, training=False), or predict once on the whole array or dataset "
        "outside the loop; train one batch with train_on_batch(x, y), not fit()"
    )
    needs = TENSORFLOW_CODE & Names("predict", "fit")
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(49, 2, 22), leaks=(17, 0))
    docs = """
## What it finds
`model.predict(x)` inside a `for` / `while` loop or a comprehension, where `x` changes every
iteration (it mentions the loop variable or something the loop body assigns), and `model` is a
Keras model as far as the file shows: it was built or loaded with `keras.Sequential`,
`keras.Model`, `tf.keras.models.load_model`, `tf.keras.applications.*`, a local subclass of
`keras.Model`, a local function that returns one, or it is compiled with Keras arguments
(`model.compile(optimizer=..., loss=...)`), it is a Keras callback's `self.model`, it is `self` in
a method of a local `keras.Model` subclass (`self.predict(obs)` in an agent's `act()`; not when the
class defines its own `predict`), or the loop
iterates over a container of such models (`for tag, model in models.items()`). Also `predict`
on a function parameter that the file's callers pass a Keras model to, and `predict` inside a
helper that a loop calls, on inputs the helper computes from its parameters
(`features = to_features(payload)`) (medium confidence).

`model.fit(x, y, epochs=1)` in a loop that walks an array batch by batch (the body slices
something by the loop variable: `real = images[b * n:(b + 1) * n]`), on data the loop makes, on a
model the loop does not rebuild, is reported with medium confidence: each
`fit()` builds a data adapter, a callback list and a training function's state for a single
batch, and host memory grows batch after batch (`train_on_batch` is the per-batch API). A `fit()`
per epoch on the same arrays, per fold on a new model, or per observation of an online learner
(data that arrives one batch at a time: there is nothing for one `fit()` to walk) is not reported.
`predict` once per epoch from a Keras callback is not reported either: reports disagree on whether
it grows (keras#8668 says so; keras#4168 and bench/leaks' callback cases keep it as the fix).

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

## Fix safety
No automatic fix: calling the model directly (`model(x, training=False)`) returns a tensor
instead of a numpy array, and batching the inputs into one `predict` restructures the loop; both
are the author's choice.

## Known false positives
A loop that calls `predict` on a large, changing array a handful of times (once per data shard)
pays little; suppress it with `# noqa: LL501`. Not reported: a loop that runs once by its
literals (`for images, labels in dataset.take(1):`), files that run Keras 3 on another
backend (`os.environ["KERAS_BACKEND"] = "jax"`), where `predict()` builds no tf.data pipeline,
and files that can only run graph-mode Keras (standalone Keras 2.3 or older, tf.keras under TF1
or with eager execution off), where `predict()` reuses the one predict function Keras built:
they switch eager execution off in top-level code (`tf.compat.v1.disable_eager_execution()`), or
running them always reads a member that only the graph-mode training engine gives a Keras model
(`model._make_predict_function()`, `model._make_train_function()`, `model.total_loss`,
`model._feed_targets`, `model._feed_sample_weights`), in top-level code or in a top-level
function that top-level code calls, outside any branch, loop or `try`. Such a read behind a
check (`if hasattr(model, "_make_predict_function"):`) or after a `return` that may come first
(`if tf.executing_eagerly(): return`; an error path that raises does not count), or an attribute of that name the file assigns or defines
itself (a `total_loss` property of its own model class), is no such evidence: the file may run on eager tf.keras as well. Graph-only code
that the file does not show stays reported: a loss function that calls `K.gradients` runs in a
graph under both engines, and a helper of another module that reads a tensor's
`_keras_history` is out of sight (bert4keras's gradient-penalty example, written for Keras 2.3,
is reported for this reason). leaklint cannot tell a Keras model passed in from
another module: such models are only found when the file builds, loads or compiles them, or
passes them to the helper that predicts.

On bench/realcode most findings are true: per-token or per-character generation loops, per-batch
feature extraction, a `predict` per environment step in RL agents and per batch in GAN training
loops, a `predict` per time step in forecasting notebooks, per image in evaluation scripts. The
debatable ones are notebooks written for standalone Keras 2.0 on the TF1 backend (there `predict`
builds no `tf.data` pipeline), bert4keras examples that may run on either engine, and loops that
run a handful of times (three or four images, files picked by hand in an upload widget). The
false ones are the gradient-penalty example above; those at first in a script that switches eager
execution off at import, and in bert4keras's adversarial-training examples, which override Keras
2.3's train function, are fixed.

## References
- `Model.predict` ("not intended for use inside of loops"):
  https://keras.io/api/models/model_training_apis/#predict-method
- Keras FAQ, the difference between `predict()` and `__call__()`:
  https://keras.io/getting_started/faq/#whats-the-difference-between-model-methods-predict-and-call
- Repeatedly calling `model.predict(...)` results in a memory leak:
  https://github.com/keras-team/keras/issues/13118
- Memory leak in `tf.keras.Model.predict`: https://github.com/tensorflow/tensorflow/issues/44711
- `predict()` in a loop consuming all RAM on TF 2.0: https://github.com/tensorflow/tensorflow/issues/33009
- Runtime repro: `leaklint verify LL501` measures the leaky and the fixed loop body.
"""
    VALID = (
        # fit() once per epoch on the whole arrays; fit() per fold on a new model
        """
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
for epoch in range(100):
    model.fit(x_train, y_train, epochs=1, verbose=0)
for fold, (train_idx, val_idx) in enumerate(folds):
    fold_model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    fold_model.compile(optimizer="adam", loss="mse")
    fold_model.fit(x_train[train_idx], y_train[train_idx], epochs=5)
""",
        """
import os
os.environ["KERAS_BACKEND"] = "jax"
import keras
model = keras.Sequential([keras.layers.Dense(4)])
for sentence in sentences:
    model.predict(encode([sentence]))
""",
        """
import tensorflow as tf
model = tf.keras.models.load_model("model.keras")
for images, labels in test_dataset.take(1):
    predictions = model.predict(images[None])
""",
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
        # the class defines its own predict(): self.predict is not Keras's
        """
import tensorflow as tf
class Policy(tf.keras.Model):
    def call(self, x):
        return self.dense(x)
    def predict(self, x):
        return self(x, training=False).numpy()
    def act(self, obs):
        return self.predict(obs[None])
policy = Policy()
obs = env.reset()
for step in range(100000):
    action = policy.act(obs)
    obs = env.step(action)
""",
        # Eager execution switched off: predict() runs the one graph-mode predict function
        # Keras built, with no tf.data pipeline per call
        """
import numpy as np
import tensorflow as tf
from tensorflow.keras.models import load_model
tf.compat.v1.disable_eager_execution()
def featuremaps(model_path, images):
    model = load_model(model_path)
    maps = []
    for image in images:
        maps.append(model.predict(np.expand_dims(image, 0)))
    return maps
""",
        # Keras 2 on TF1: the serving idiom builds the one predict function up front, a member only
        # the graph-mode engine has; every predict() reuses it
        """
from keras.models import load_model
classifier = load_model("intent.h5")
classifier._make_predict_function()
for message in inbox:
    scores = classifier.predict(vectorize([message]))
""",
        # a helper that top-level code always runs wraps the compiled loss in a backend function:
        # total_loss and the target placeholders exist only in graph-mode Keras
        """
import numpy as np
from keras import backend as K
from keras.layers import Dense
from keras.models import Sequential
net = Sequential([Dense(16, input_shape=(8,)), Dense(1)])
net.compile(optimizer="sgd", loss="mse")
def loss_function(model):
    if not model.outputs:
        raise ValueError("compile a built model first")  # an error path, not a way the run takes
    feeds = model._feed_inputs + model._feed_targets + model._feed_sample_weights
    return K.function(feeds, [model.total_loss])
batch_loss = loss_function(net)
for row in rows:
    estimate = net.predict(np.expand_dims(row, 0))
""",
    )
    INVALID = (
        # fit() on one batch per iteration of a batch loop
        """
import numpy as np
import tensorflow as tf
critic = tf.keras.Sequential([tf.keras.layers.Dense(1)])
critic.compile(optimizer="adam", loss="mse")
for epoch in range(100):
    for start in range(0, len(states), 64):
        batch_x, batch_y = states[start:start + 64], returns[start:start + 64]
        critic.fit(batch_x, batch_y, epochs=1, verbose=0)  # expect: LL501
""",

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
        # a Keras callback's self.model, one probe at a time
        """
import tensorflow as tf
class ProbeDrift(tf.keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        for probe in self.probes:
            scores = self.model.predict(probe[None], verbose=0)  # expect: LL501
""",
        # every model of a dict, per feature file
        """
import tensorflow as tf
models = {tag: tf.keras.models.load_model(f"{tag}.keras") for tag in tags}
for path in paths:
    features = read_features(path)
    for tag, model in models.items():
        scores[tag] = model.predict(features, verbose=0)  # expect: LL501
""",
        # a keras.Model subclass predicting on itself in a method a loop calls
        """
import tensorflow as tf
class Policy(tf.keras.Model):
    def call(self, x):
        return self.dense(x)
    def act(self, obs):
        return self.predict(obs[None], verbose=0)  # expect: LL501
policy = Policy()
obs = env.reset()
for step in range(100000):
    action = policy.act(obs)
    obs = env.step(action)
""",
        # a request handler: the input is computed from the handler's parameter
        """
import tensorflow as tf
model = tf.keras.models.load_model("churn.keras")
def handle(payload):
    features = to_features(payload)
    return model.predict(features, verbose=0)  # expect: LL501
for line in stream:
    handle(line)
""",
        # Graph mode only behind a command-line flag that is off by default: eager predict() per item
        """
import argparse
import numpy as np
import tensorflow as tf


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tf1", action="store_true")
    args = parser.parse_args()
    if args.tf1:  # off by default: eager execution stays on
        tf.compat.v1.disable_eager_execution()
    model = tf.keras.models.load_model("model.h5")
    maps = []
    for image in np.load("images.npy"):
        maps.append(model.predict(np.expand_dims(image, 0)))  # expect: LL501
    return maps
""",
        # the graph-engine member only behind a check: the file runs on eager tf.keras too
        """
import tensorflow as tf
model = tf.keras.models.load_model("classifier.h5")
if hasattr(model, "_make_predict_function"):
    model._make_predict_function()
for path in image_paths:
    probs = model.predict(load_image(path)[None])  # expect: LL501
""",
        # the member read in a warm-up that returns first under eager execution, and a property
        # of that name the file's own model class defines
        """
import tensorflow as tf
from tensorflow import keras

def warm_up(m):
    if tf.executing_eagerly():
        return
    m._make_predict_function()

class Forecaster(keras.Model):
    def __init__(self):
        super().__init__()
        self.head = keras.layers.Dense(1)
        self.tracker = keras.metrics.Mean()
    def call(self, x):
        return self.head(x)
    @property
    def total_loss(self):
        return self.tracker.result()

model = tf.keras.models.load_model("classifier.h5")
warm_up(model)
for path in image_paths:
    probs = model.predict(load_image(path)[None])  # expect: LL501
forecaster = Forecaster()
forecaster.compile(optimizer="adam", loss="mse")
print("final loss", float(forecaster.total_loss))
for window in windows:
    forecast = forecaster.predict(window[None])  # expect: LL501
""",
        # the script's own attribute of that name, not Keras's compiled loss
        """
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.total_loss = tf.keras.metrics.Mean()
print(float(model.total_loss.result()))
for window in windows:
    forecast = model.predict(window[None])  # expect: LL501
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """`model.predict()` on one item per loop iteration, vs calling the model directly."""

        requires = ("tensorflow", "numpy")
        tensors = False
        host_meter = "heap"

        def setup(self, ctx):
            import numpy as np
            import tensorflow as tf
            tf.keras.utils.set_random_seed(0)
            ctx.model = tf.keras.Sequential([tf.keras.Input((32,)), tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
            ctx.image = np.random.default_rng(0).standard_normal((32,)).astype("float32")

        def leaky(self, ctx):
            ctx.model.predict(ctx.image[None], verbose=0)

        def fixed(self, ctx):
            ctx.model(ctx.image[None], training=False).numpy()


# --- detection ------------------------------------------------------------------------------------
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


def _keras_backend(facts: ModuleFacts) -> str | None:
    """The backend the file asks Keras 3 for: ``os.environ["KERAS_BACKEND"] = "jax"`` (or
    ``.setdefault``) before importing it; None when it does not say."""
    for node in walk(facts.module):
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.SimpleString):
            for target in node.targets:
                if isinstance(target.target, cst.Subscript) and _is_backend_key(target.target):
                    return str(node.value.evaluated_value)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "setdefault":
            values = [arg.value for arg in node.args]
            if len(values) == 2 and isinstance(values[0], cst.SimpleString) and values[0].evaluated_value == "KERAS_BACKEND" and isinstance(values[1], cst.SimpleString):
                return str(values[1].evaluated_value)
    return None


def _is_backend_key(subscript: cst.Subscript) -> bool:
    index = subscript.slice[0].slice if len(subscript.slice) == 1 else None
    return isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString) and index.value.evaluated_value == "KERAS_BACKEND"


#: Calls that switch TensorFlow to graph mode for the whole program (TF1 behaviour).
_GRAPH_MODE_SWITCHES = ("disable_eager_execution", "disable_v2_behavior")


def _eager_disabled(facts: ModuleFacts) -> bool:
    """The module switches eager execution off (``tf.compat.v1.disable_eager_execution()``; the
    name belongs to TensorFlow alone, also where ``tf`` is imported twice, as ``tensorflow`` and
    as ``tensorflow.compat.v1``)."""
    return any(
        isinstance(place.node.func, cst.Attribute) and _always_runs_at_import(place)  # type: ignore[attr-defined]
        for name in _GRAPH_MODE_SWITCHES
        for place in facts.index.calls_named(name)
    )


def _always_runs_at_import(place) -> bool:
    """The call is in the module's top-level code, outside any branch but a TensorFlow version
    check (``if tf.__version__.startswith("2"):``, where a TF2 program switches to graph mode)."""
    for node in place.chain:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.For, cst.While, cst.Try, cst.With)):
            return False
        if isinstance(node, cst.If) and not any(name.endswith(".__version__") for name in names_read(node.test)):
            return False
    return True


#: Members that only the graph-mode Keras training engine gives a model (standalone Keras 2.3 and
#: earlier, tf.keras under TF1 or with eager execution off): ``compile`` builds the symbolic
#: ``total_loss`` and the ``_feed_targets`` / ``_feed_sample_weights`` placeholders, and
#: ``_make_train_function()`` & co. build the one backend function that ``fit`` / ``evaluate`` /
#: ``predict`` then reuse. Eager tf.keras models (TF 2.2 and later) and Keras 3 models have none of
#: them, so a program that reads one of them on a Keras model runs graph-mode Keras throughout.
#: (TF 2.0 and 2.1 kept both engines in one Model class: a file written for them is the one case
#: this table cannot tell apart.)
_GRAPH_ENGINE_MEMBERS = frozenset(
    {"_make_train_function", "_make_test_function", "_make_predict_function", "total_loss", "_feed_targets", "_feed_sample_weights"}
)
#: Nodes whose part holding a descendant may not run: branches, loops, handlers, scopes,
#: short-circuits and ``with`` blocks (a context manager may swallow the error).
_CONDITIONAL = (
    cst.If, cst.IfExp, cst.BooleanOperation, cst.For, cst.While, cst.Try, cst.With, cst.FunctionDef, cst.ClassDef,
    cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
)


def _uses_graph_engine(facts: ModuleFacts, models: KerasModels, sites: CallGraph) -> bool:
    """Running the file always reads a graph-engine member (:data:`_GRAPH_ENGINE_MEMBERS`) of a
    Keras model: ``model._make_train_function()``, ``K.gradients(model.total_loss, ...)``. Only
    graph-mode Keras has them, and there ``predict()`` reuses one cached predict function. A read
    behind a branch or a ``try`` (code written for both engines) is no such evidence, nor is an
    attribute of that name the file assigns itself (``self.total_loss = ...``)."""
    members = _GRAPH_ENGINE_MEMBERS - _assigned_attributes(facts)
    if not members:
        return False

    def wanted(node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Attribute) and node.attr.value in members

    for node, path in walk_with_ancestors(facts.module, wanted):
        place = Place(node, path)
        if not _always_reached(facts, sites, place):
            continue
        receiver = node.value  # type: ignore[attr-defined]
        evidence = models.expression(receiver, place)
        info = place.function(facts)
        name = dotted_name(receiver)
        if evidence is None and info is not None and name in info.params:
            evidence = models.parameter(info, name, sites)  # type: ignore[arg-type]
        if evidence is not None:
            return True
    return False


def _assigned_attributes(facts: ModuleFacts) -> set[str]:
    """The attribute names the file assigns (``self.total_loss = ...``) or defines in a class
    (a ``total_loss`` property or method of its own model): its own, not Keras's."""
    names = {name for cls in facts.structure.classes.values() for name in cls.methods}
    for place in facts.index.assignments:
        node = place.node
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]  # type: ignore[attr-defined]
        names.update(t.attr.value for target in targets for t in walk(target) if isinstance(t, cst.Attribute))
    return names


def _always_reached(facts: ModuleFacts, sites: CallGraph, place: Place) -> bool:
    """Running the module reaches ``place`` whatever the inputs: it is in top-level code outside
    any branch, loop, handler or nested scope, or in such code of a top-level function that
    top-level code calls that way."""
    if any(isinstance(node, _CONDITIONAL) for node in place.chain[place.scope_index + 1:-1]):
        return False
    if place.scope is None:
        return True
    info = place.function(facts)
    if info is None or info.parent is not None or info.cls is not None or info.node is None:
        return False
    if _may_leave_before(info.node, place):
        return False
    return any(
        site.scope is None and not any(isinstance(node, _CONDITIONAL) for node in site.path)
        for site in sites.places_of(info)
    )


def _may_leave_before(function: cst.FunctionDef, place: Place) -> bool:
    """A ``return`` comes before ``place`` in ``function`` (``if tf.executing_eagerly():
    return``): a run may leave the function without reaching it. A ``raise`` is an error path,
    not a way a working run takes (``if layer is None: raise ...``)."""
    on_path = {id(node) for node in place.chain}
    statements = function.body.body if isinstance(function.body, cst.IndentedBlock) else [function.body]
    for statement in statements:
        if id(statement) in on_path:
            return False
        if any(isinstance(node, cst.Return) for node in walk(statement, into=not_into_scopes)):
            return True
    return False


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    if not facts.imports.imports_anything_from(*TENSORFLOW_ROOTS):
        return
    if _keras_backend(facts) not in (None, "tensorflow"):
        return  # Keras 3 on JAX or torch: predict() builds no tf.data pipeline
    if _eager_disabled(facts):
        return  # graph mode: predict() runs the one predict function Keras built, no pipeline per call

    places = [
        p for method in ("predict", "fit") for p in facts.index.calls_named(method)
        if isinstance(p.node.func, cst.Attribute)  # type: ignore[attr-defined]
    ]
    if not places:
        return
    sites = call_graph(facts)
    models = keras_models(facts)
    if _uses_graph_engine(facts, models, sites):
        return  # graph-mode Keras: predict() reuses one predict function, no pipeline per call
    for place in places:
        call = place.node
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
        if call.func.attr.value == "fit":
            found = _fit_per_batch(facts, models, place, call)
            what = ("fit()", "builds a data adapter, callbacks and a training loop for one batch", "use train_on_batch()")
        else:
            found = _per_item(facts, models, sites, place, call)
            what = ("predict()", "builds a tf.data pipeline", "call the model directly")
        if found is None:
            continue
        confidence, where = found
        method, builds, instead = what
        yield Violation(
            node=call,
            message=(
                f"'{facts.describe(call)}' runs Keras {method} {where}: each call {builds} and, in many "
                f"TensorFlow versions, leaks memory ({instead})"
            ),
            confidence=confidence,
            statement=place.statement(),
        )


def _fit_per_batch(facts: ModuleFacts, models: KerasModels, place: Place, call: cst.Call) -> tuple[Confidence, str] | None:
    """``model.fit(x, y, epochs=1)`` in a loop over batches, on a batch the loop makes: the loop
    does fit()'s own job one batch at a time (a new model per iteration is LL503's business)."""
    receiver = call.func.value  # type: ignore[attr-defined]
    evidence = models.expression(receiver, place)
    data = call_argument(call, 0, "x")
    if evidence is None or data is None:
        return None
    mentioned = dotted_names_in(data)
    for loop in reversed(place.loop_nodes):
        if not mentioned & per_iteration_names(facts, loop):
            continue
        per_batch = _looks_like_one_item(data) or _walks_batches(loop)
        if not per_batch or _rebuilds(models, loop):
            return None
        return _weaker(Confidence.MEDIUM, evidence.confidence), "on every batch of a loop"
    return None


def _per_item(
    facts: ModuleFacts, models: KerasModels, sites: CallGraph, place: Place, call: cst.Call
) -> tuple[Confidence, str] | None:
    receiver = call.func.value  # type: ignore[attr-defined]
    evidence = models.expression(receiver, place)
    info = place.function(facts)
    if isinstance(receiver, cst.Name) and receiver.value == "self" and info is not None and info.cls is not None:
        if info.cls.find_method("predict") is not None:
            return None  # the class's own predict(), not Keras's
    name = dotted_name(receiver)
    if evidence is None and info is not None and name in info.params:
        evidence = models.parameter(info, name, sites)  # type: ignore[arg-type]
    arguments = [a.value for a in call.args if a.keyword is None][:1]
    if not arguments:
        return None
    mentioned = dotted_names_in(arguments[0])
    one_item = _looks_like_one_item(arguments[0])
    for loop in reversed(place.loop_nodes):
        info = facts.structure.loops.get(loop)
        if info is not None and info.at_most is not None and info.at_most <= 1:
            continue  # for images, labels in dataset.take(1): runs once
        if not mentioned & per_iteration_names(facts, loop):
            continue
        if evidence is None or _refits(models, loop, dotted_name(receiver)):
            return None
        strong = one_item or loop_level(facts, loop) is Level.STEP or isinstance(loop, cst.While)
        confidence = evidence.confidence if strong else Confidence.MEDIUM
        return _weaker(confidence, evidence.confidence), "on every loop iteration"
    if place.loops:
        return None
    return _in_helper(facts, models, sites, place, receiver, mentioned, evidence)


def _in_helper(
    facts: ModuleFacts,
    models: KerasModels,
    sites: CallGraph,
    place: Place,
    receiver: cst.BaseExpression,
    mentioned: set[str],
    evidence: KerasEvidence | None,
) -> tuple[Confidence, str] | None:
    """``predict`` on a parameter-derived input in a function a loop calls."""
    info = place.function(facts)
    if info is None or not mentioned & _from_parameters(info):
        return None
    name = dotted_name(receiver)
    if evidence is None and name in info.params:
        evidence = models.parameter(info, name, sites)  # type: ignore[arg-type]
    if evidence is None:
        return None
    for site in sites.places_of(info):
        if _site_per_item(facts, models, site):
            return _weaker(Confidence.MEDIUM, evidence.confidence), f"on every call of '{info.name}', which a loop calls"
    return None


def _from_parameters(info: FunctionInfo) -> set[str]:
    """The parameters of ``info`` and the names its body computes from them
    (``features = to_features(payload)``)."""
    derived = set(info.params)
    assert info.node is not None
    assignments = [node for node in walk(info.node.body) if isinstance(node, cst.Assign)]
    changed = True
    while changed:
        changed = False
        for node in assignments:
            if dotted_names_in(node.value) & derived:
                for target in node.targets:
                    new = set(bound_names(target.target)) - derived
                    if new:
                        derived |= new
                        changed = True
    return derived


def _site_per_item(facts: ModuleFacts, models: KerasModels, site: Place) -> bool:
    """A call of the helper in a loop, on inputs that change every iteration, with a model the
    loop does not rebuild or refit (one call per fold is one predict per model)."""
    mentioned = set().union(*(dotted_names_in(a.value) for a in site.node.args))  # type: ignore[attr-defined]
    for loop in reversed(site.loop_nodes):
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
    return _rebuilds(models, loop)


def _walks_batches(loop: cst.CSTNode) -> bool:
    """The loop walks an array batch by batch: its body slices something by the loop's variable
    (``images[b * n:(b + 1) * n]`` in ``for b in range(steps)``), fit()'s own job."""
    if not isinstance(loop, cst.For):
        return False
    counters = set(bound_names(loop.target))
    return any(
        isinstance(node, cst.Subscript)
        and any(isinstance(element.slice, cst.Slice) and dotted_names_in(element.slice) & counters for element in node.slice)
        for node in walk(loop.body)
    )


def _rebuilds(models: KerasModels, loop: cst.CSTNode) -> bool:
    """The loop builds a Keras model (one per fold or trial)."""
    for node in walk(loop.body if isinstance(loop, (cst.For, cst.While)) else loop):  # type: ignore[attr-defined]
        if isinstance(node, cst.Call) and isinstance(node.func, (cst.Name, cst.Attribute)) and models.construction(node) is not None:
            return True
    return False


def _weaker(a: Confidence, b: Confidence) -> Confidence:
    return a if a <= b else b
