"""LL501 keras-predict-in-loop: ``model.predict(x)`` on one item or batch per loop iteration."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from leaklint.analysis.torch_api import TENSORFLOW_ROOTS
from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.prefilter import SyntaxShape


class KerasPredictInLoop(Rule):
    code = "LL501"
    name = "keras-predict-in-loop"
    severity = Severity.LEAK
    summary = "A Keras model's predict() is called on one item or batch per loop iteration, which leaks memory in many TensorFlow versions."
    help = "call the model directly, model(x, training=False), or predict once on the whole array or dataset outside the loop"
    requires_any = ("keras", "tensorflow")  # checked only in files importing TensorFlow or Keras
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

## Fix safety
No automatic fix: calling the model directly (`model(x, training=False)`) returns a tensor
instead of a numpy array, and batching the inputs into one `predict` restructures the loop; both
are the author's choice.

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
- Runtime repro: `leaklint verify LL501` measures the leaky and the fixed loop body.
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

    @classmethod
    def may_report(cls, shape: SyntaxShape, min_confidence: Confidence) -> bool:
        """A finding is a ``predict`` call in a file that imports TensorFlow or Keras."""
        return shape.uses(*TENSORFLOW_ROOTS) and shape.uses("predict")

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        from leaklint.rules.checks.ll501_keras_predict_in_loop import check

        return check(facts)

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
