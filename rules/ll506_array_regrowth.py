"""LL506 array-regrowth: arrays and tf.data pipelines rebuilt from themselves in every iteration."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name, dotted_names_in
from leaklint.analysis.places import Place, walk_with_ancestors
from leaklint.analysis.structure import bound_names
from leaklint.analysis.syntax import call_argument, subscript_base
from leaklint.analysis.iterations import few_runs, walks_equal_parts
from leaklint.analysis.tensorflow import TfGraph, tf_api, tf_graph
from leaklint.analysis.torch_api import LOOPS_OR_FUNCTIONS, TENSORFLOW_ROOTS
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names, Words
from leaklint.rule import Measured, Rule, Violation


_WRAPPER_NAMES = ("shuffle", "batch", "map", "repeat", "prefetch", "cache", "padded_batch", "filter", "unbatch", "interleave", "apply")


class ArrayRegrowth(Rule):
    code = "LL506"
    name = "array-regrowth"
    severity = Severity.PERF
    summary = "An array or tf.data pipeline is rebuilt from itself every iteration (np.append, tf.concat, ds = ds.shuffle()), so each iteration copies or wraps everything so far."
    help = "collect the pieces in a list and concatenate once after the loop; build a tf.data pipeline once, before the loop"
    #: What a file must contain: numpy or TensorFlow, a growing call or a tf.data wrapper, and a
    #: loop or a function (a per-batch hook) to repeat it.
    needs = Words("numpy", "tensorflow", "keras") & Names(
        "append", "concatenate", "vstack", "hstack", "row_stack", "column_stack", "dstack", "concat", *_WRAPPER_NAMES
    ) & LOOPS_OR_FUNCTIONS
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(21, 0, 16), leaks=(4, 0))
    docs = """
## What it finds
An assignment that rebuilds a value from itself plus something new, where it runs again and
again while the value is kept:

- `x = np.append(x, new)`, `x = np.concatenate([x, new])` (also `vstack`, `hstack`,
  `column_stack`, `dstack`), `x = tf.concat([x, new], 0)`, in a loop that carries `x` from one
  iteration to the next, or in a function called per batch or epoch (a Keras callback hook) when
  the value lives on the object (`self.scores[k] = tf.concat([self.scores.get(k), s], 0)`);
- `ds = ds.shuffle(...)` (or `.batch`, `.map`, `.repeat`...) on a `tf.data` pipeline in a loop:
  each iteration wraps the previous pipeline in one more.

It stays quiet for `np.concatenate(pieces)` on a list (joining once is the fix), when the loop
binds the value afresh each iteration, in loops of at most five iterations, and when the loop
reads the growing value for more than its size or a printout (`x = np.concatenate([x,
model.predict(x)])`: autoregressive generation and dense blocks need the whole sequence so far;
the growth is the computation). `torch.cat` regrowth of device tensors is left to the rules about
tensors kept on the device. A loop that puts back together the `n` equal parts of one collection
already in memory (`for i in range(n)` taking `items[size * i: size * (i + 1)]` with `size =
len(items) // n`, as code that pads one batch per GPU does) into a local started afresh before it
is low confidence: it runs once per part, `n` being the number of parts the code chose (devices,
shards), not the size of the data, so the copies grow with `n` only (each pass copies the
collection once), which is only quadratic if `n` is made large on purpose. A count computed from
the data's size (`n = len(samples) // 4096`) is not such a choice: that loop stays reported.

## Why it matters
NumPy and TensorFlow arrays cannot grow in place: `np.append` and `tf.concat` allocate a new
array and copy everything gathered so far into it. Growing one batch at a time copies the first
batch N times, the second N-1 times...: the loop does quadratic work, slows down as it goes, and
holds two full copies at every step (the old one and the new). A `tf.data` pipeline re-wrapped
every epoch keeps every earlier wrapper, with its buffers, alive inside the new one: memory and
iterator set-up grow epoch after epoch. A callback that concatenates every batch's outputs onto an
attribute never stops growing.

## Example
```python
all_logits = None
for input_ids, labels in dataset:
    logits = predict_step(model, input_ids).numpy()
    all_logits = logits if all_logits is None else np.append(all_logits, logits, axis=0)
```

## Use instead
```python
chunks = []
for input_ids, labels in dataset:
    chunks.append(predict_step(model, input_ids).numpy())
all_logits = np.concatenate(chunks)
```

## Fix safety
No automatic fix: collecting into a list changes the type of the value inside the loop, and code
in the loop that reads it (its length, a progress printout) has to change too.

## Known false positives
Growth that the loop needs is reported when the loop only hands the value to something leaklint
cannot see using it (a helper that reads the whole array every step). Doubling, where nothing new
is added (`audio = np.concatenate([audio, audio])` until it is long enough: log2 iterations, O(n)
copied in all), is not regrowth and not reported.

On bench/realcode many findings are true: embeddings or logits concatenated once per batch or per
window of a whole split or recording (a speaker-verification recipe, an audio tutorial), face
crops appended once per image of a batch, a point-cloud loader stacking every block of a scene, a
tf.data benchmark helper concatenating per-step timings. About as many are real but harmless,
judged debatable: loops over the scales of an image pyramid, the classes of one image's
detections, the heads of an SSD model, the rows of a 10 x 10 sample grid, or in a helper nothing
calls. At first Tacotron-2's feeder and synthesizer were reported too, falsely: they concatenate
one slice of the batch per GPU (`for i in range(hparams.tacotron_num_gpus)`, one to four); since
fixed.

## References
- `numpy.append` ("a copy of arr with values appended... append does not occur in-place: a new
  array is allocated and filled"): https://numpy.org/doc/stable/reference/generated/numpy.append.html
- Growing a NumPy array in a loop vs collecting a list:
  https://stackoverflow.com/questions/7133885/fastest-way-to-grow-a-numpy-numeric-array
- Memory held by `shuffle` not released when new pipelines and iterators are made:
  https://github.com/tensorflow/tensorflow/issues/44176
- Runtime repro: `leaklint verify LL506` measures the leaky and the fixed loop body.
"""
    VALID = (
        # collected in a list, joined once
        """
import numpy as np
chunks = []
for batch in dataset:
    chunks.append(model(batch).numpy())
logits = np.concatenate(chunks)
""",
        # bound afresh each iteration: growth within one iteration only
        """
import numpy as np
for image in images:
    row = np.zeros((0, 4))
    row = np.vstack([row, boxes(image)])
    save(row)
""",
        # autoregressive: each step feeds the whole sequence so far to the model
        """
import numpy as np
x = seed[None]
for step in range(horizon):
    y = model.predict(x[:, -window:])
    x = np.concatenate([x, y[:, None]], axis=1)
""",
        # the pipeline is built once; the loop only iterates it
        """
import tensorflow as tf
dataset = tf.data.Dataset.from_tensor_slices(data).shuffle(1000, reshuffle_each_iteration=True).batch(32)
for epoch in range(50):
    for batch in dataset:
        step(batch)
""",
        """
import numpy as np
def pad_by_repeating(audio, len_samples):
    while audio.shape[-1] < len_samples:  # log2(len_samples / len(audio)) iterations
        audio = np.concatenate([audio, audio], axis=-1)  # doubles the clip: nothing new added
    return audio
""",
        # one batch cut into a part per replica and put back together, each part padded on its
        # own: as many iterations as replicas, however big the batch (low confidence only)
        """
import numpy as np
def shard_batch(examples, n_replicas):
    per_replica = len(examples) // n_replicas
    stacked = None
    for r in range(n_replicas):
        shard = pad_to_longest(examples[r * per_replica:(r + 1) * per_replica])
        stacked = shard if stacked is None else np.concatenate([stacked, shard], axis=1)
    return stacked
""",
    )
    INVALID = (
        """
import numpy as np
all_logits = None
for input_ids, labels in dataset:
    logits = predict_step(model, input_ids).numpy()
    if all_logits is None:
        all_logits = logits
    else:
        all_logits = np.append(all_logits, logits, axis=0)  # expect: LL506
    print(f"{len(all_logits)} examples")
""",
        """
import tensorflow as tf
def fit(model, dataset, epochs):
    for epoch in range(epochs):
        dataset = dataset.shuffle(1000)  # expect: LL506
        for x, y in dataset:
            model.train_on_batch(x, y)
fit(model, tf.data.Dataset.from_tensor_slices((x, y)).batch(32), 100)
""",
        """
import tensorflow as tf
class Scores(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.scores = {}
    def on_train_batch_end(self, batch, logs=None):
        previous = self.scores.get("loss")
        self.scores["loss"] = tf.concat([previous, [logs["loss"]]], 0)  # expect: LL506
""",
        """
import numpy as np
def pad_with_last(audio, len_samples):
    while audio.shape[-1] < len_samples:
        audio = np.concatenate([audio, audio[..., -1:]], axis=-1)  # expect: LL506
    return audio
""",
        # fixed-size chunks: their number grows with the recording
        """
import numpy as np
def features(samples, hop=4096):
    feats = np.zeros((0, 40))
    for k in range(len(samples) // hop):
        feats = np.vstack([feats, mel_frames(samples[k * hop:(k + 1) * hop])])  # expect: LL506
    return feats

def windows(samples):
    # equal parts, but as many as the recording holds: their number is computed from its length
    n_windows = len(samples) // 4096
    hop = len(samples) // n_windows
    feats = np.zeros((0, 40))
    for k in range(n_windows):
        feats = np.vstack([feats, mel_frames(samples[k * hop:(k + 1) * hop])])  # expect: LL506
    return feats
""",
        # split per device, but gathered across the whole loader: grows with every batch
        """
import numpy as np
embeddings = np.zeros((0, 128))
for batch in loader:
    per_device = len(batch) // n_devices
    for d in range(n_devices):
        part = encode(batch[d * per_device:(d + 1) * per_device], device=d)
        embeddings = np.concatenate([embeddings, part])  # expect: LL506
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """Gathering 200 batches of predictions by `np.append` (each call copies everything so
        far), vs appending them to a list and concatenating once."""

        requires = ("numpy",)
        tensors = False
        host_meter = "heap"

        def setup(self, ctx):
            import numpy as np
            ctx.batches = [np.full((64, 32), float(i), dtype=np.float32) for i in range(200)]

        def leaky(self, ctx):
            import numpy as np
            gathered = np.zeros((0, 32), dtype=np.float32)
            for batch in ctx.batches:
                gathered = np.append(gathered, batch, axis=0)  # noqa: LL506 (the leaky variant)

        def fixed(self, ctx):
            import numpy as np
            chunks = []
            for batch in ctx.batches:
                chunks.append(batch)
            np.concatenate(chunks)


# --- detection ------------------------------------------------------------------------------------
#: Functions that return a new array holding all of their inputs.
_NUMPY_GROWING = frozenset(
    {"numpy.append", "numpy.concatenate", "numpy.vstack", "numpy.hstack", "numpy.row_stack", "numpy.column_stack", "numpy.dstack"}
)
_TF_GROWING = frozenset({"concat"})
#: tf.data methods that wrap a dataset in a new one.
_DATASET_WRAPPERS = frozenset(
    {"shuffle", "batch", "map", "repeat", "prefetch", "cache", "concatenate", "padded_batch", "filter", "unbatch", "interleave", "apply"}
)


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    if not facts.imports.imports_anything_from("numpy", *TENSORFLOW_ROOTS):
        return
    tf = _Lazy(facts)
    for place in facts.index.assignments:
        node = place.node
        if not isinstance(node, cst.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0].target
        found = _regrowth(facts, tf, place, target, node.value)
        if found is None:
            continue
        call, what = found
        where = _where(facts, tf, place, target)
        if where is None:
            continue
        confidence, when = where
        name = facts.describe(target)
        yield Violation(
            node=call,
            message=(
                f"'{name}' is rebuilt from itself {what} {when}: each time, everything gathered so far is "
                "copied (or wrapped once more), so the work and the memory of one iteration grow with the "
                "number of iterations"
            ),
            confidence=confidence,
            statement=place.statement(),
        )


class _Lazy:
    """The file's TfGraph, built only if a finding needs it (most files with ``np.append`` never do)."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts

    def __getattr__(self, name: str):  # noqa: ANN204 - delegate to the TfGraph
        return getattr(tf_graph(self.facts), name)


def _regrowth(
    facts: ModuleFacts, tf: TfGraph, place: Place, target: cst.BaseExpression, value: cst.BaseExpression
) -> tuple[cst.Call, str] | None:
    """The call that rebuilds ``target`` from itself: ``x = np.append(x, y)``,
    ``x = tf.concat([x, y], 0)``, ``ds = ds.shuffle(1000)``."""
    calls = [
        call
        for call in walk(value, into=not_into_scopes)
        if isinstance(call, cst.Call)
        and (
            _growing(facts, call)
            or (isinstance(call.func, cst.Attribute) and call.func.attr.value in _DATASET_WRAPPERS)
        )
    ]
    if not calls:
        return None  # most assignments: no need to look for the target's other names
    names = _names_of(facts, place, target)
    if not names:
        return None
    for call in calls:
        qualified = facts.imports.resolve(call.func)
        grows = qualified in _NUMPY_GROWING or tf_api(qualified) in _TF_GROWING
        if grows and call.args:
            arrays = call.args[0].value
            if qualified == "numpy.append":
                parts = [arrays, *(a.value for a in call.args[1:2])]
            elif isinstance(arrays, (cst.List, cst.Tuple)):
                parts = [e.value for e in arrays.elements]
            else:
                parts = []  # np.concatenate(pieces): joining a list of pieces once, the right way
            # x = np.concatenate([x, x]) only doubles what is there (log2(n) iterations, O(n)
            # copied in all): nothing new is added, so it is no regrowth
            kept = [dotted_name(part) in names for part in parts]
            if any(kept) and not all(kept) and not _fed_back(facts, place, names):
                return call, f"with '{facts.describe(call.func)}'"
        func = call.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in _DATASET_WRAPPERS
            and dotted_name(func.value) in names
            and _is_dataset(facts, tf, func.value, place)
        ):
            return call, f"with '.{func.attr.value}()' (a tf.data pipeline wrapping the previous one)"
    return None


def _names_of(facts: ModuleFacts, place: Place, target: cst.BaseExpression) -> set[str]:
    """``target``'s dotted name and the names that hold its previous value in the same function
    (``previous = self.scores.get(name)`` for ``self.scores[name]``)."""
    if isinstance(target, (cst.Name, cst.Attribute)):
        name = dotted_name(target)
        if name is None:
            return set()
        base = name
        names = {name}
    elif isinstance(target, cst.Subscript):
        base = subscript_base(target)  # type: ignore[assignment]
        if base is None:
            return set()
        names = set()
    else:
        return set()
    scope = place.scope
    body = scope.body if isinstance(scope, cst.FunctionDef) else None
    if body is None:
        return names
    for node in walk(body, into=not_into_scopes):
        if not isinstance(node, cst.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            continue
        value = node.value
        source = None
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "get":
            source = dotted_name(value.func.value)
        elif isinstance(value, cst.Subscript):
            source = dotted_name(value.value)
        elif isinstance(value, (cst.Name, cst.Attribute)) and isinstance(target, (cst.Name, cst.Attribute)):
            source = dotted_name(value)
        if source == base:
            names.add(node.targets[0].target.value)
    return names


def _growing(facts: ModuleFacts, call: cst.Call) -> bool:
    qualified = facts.imports.resolve(call.func)
    return qualified in _NUMPY_GROWING or tf_api(qualified) in _TF_GROWING


_SHAPE_ATTRIBUTES = frozenset({"shape", "size", "ndim", "dtype"})
_REPORTING_CALLS = frozenset({"len", "print", "repr", "str", "format"})


def _fed_back(facts: ModuleFacts, place: Place, names: set[str]) -> bool:
    """The loop (or function) reads the growing value for more than its size or a printout
    (``X = np.concatenate([X, model.predict(X)])``: each step needs the whole sequence so far,
    as in autoregressive generation or dense blocks): the growth is the computation itself."""
    region = place.loop_nodes[-1] if place.loop_nodes else place.scope
    body = getattr(region, "body", None)
    if body is None:
        return False
    skip: set[int] = set()
    for node, path in walk_with_ancestors(body, lambda n: isinstance(n, (cst.Name, cst.Attribute))):
        if id(node) in skip or dotted_name(node) not in names:  # type: ignore[arg-type]
            continue
        skip.update(id(n) for n in walk(node))
        if any(isinstance(p, cst.Call) and _growing(facts, p) for p in path):
            continue  # read by the growing itself (here or in another statement growing it)
        parent = path[-1] if path else None
        if isinstance(parent, (cst.AssignTarget, cst.Del)):
            continue
        if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in _SHAPE_ATTRIBUTES:
            continue
        if isinstance(parent, cst.Comparison) and any(
            isinstance(c.comparator, cst.Name) and c.comparator.value == "None" for c in parent.comparisons
        ):
            continue
        if any(
            isinstance(p, cst.FormattedString)
            or (isinstance(p, cst.Call) and isinstance(p.func, cst.Name) and p.func.value in _REPORTING_CALLS)
            for p in path
        ):
            continue
        return True
    return False


def _is_dataset(facts: ModuleFacts, tf: TfGraph, expr: cst.BaseExpression, place: Place) -> bool:
    """A tf.data pipeline: bound from ``tf.data``, or a parameter every caller passes one to."""
    site = tf.scopes_of(place)
    if tf.graph_kind(expr, site) is not None:
        return True
    name = dotted_name(expr)
    function = place.function(facts)
    if name is None or function is None or name not in function.params:
        return False
    position = function.params.index(name) - (1 if function.is_method else 0)
    passed = [(call_argument(s.node, position, name), s) for s in tf.sites_of(function)]  # type: ignore[arg-type]
    passed = [(a, s) for a, s in passed if a is not None]
    return bool(passed) and all(tf.graph_kind(a, tf.scopes_of(s)) is not None for a, s in passed)  # type: ignore[arg-type]


def _where(facts: ModuleFacts, tf: TfGraph, place: Place, target: cst.BaseExpression) -> tuple[Confidence, str] | None:
    """How often the rebuilding runs while the value is kept: every iteration of a loop that
    carries it, or every call of a repeated function when it lives on the object."""
    name = dotted_name(target) or subscript_base(target)
    loops = place.loop_nodes
    if loops and name is not None:
        loop = loops[-1]
        if not _reset_in(loop, name) and not few_runs(facts, loops):
            if _joins_parts(facts, place, loops, name):
                return Confidence.LOW, (
                    f"on every iteration of the loop at line {facts.line_of(loop)} (one per part of a collection "
                    "split into equal parts: it copies the collection once per part)"
                )
            return Confidence.HIGH, f"on every iteration of the loop at line {facts.line_of(loop)}"
    if name is None or not name.startswith("self."):
        return None
    function = place.function(facts)
    repeated = tf.repeated.get(function) if function is not None else None
    if repeated is None or repeated[0] is Confidence.LOW:
        return None
    return repeated[0], f"on every call of '{function.name}', which is {repeated[1]}, and is kept on the object"  # type: ignore[union-attr]


def _joins_parts(facts: ModuleFacts, place: Place, loops: list[cst.CSTNode], name: str) -> bool:
    """The loop puts back together the ``n`` equal parts of one collection already in memory
    (``for i in range(n)`` taking ``items[size * i: size * (i + 1)]``, ``size = len(items) // n``),
    into a local that starts afresh outside it: ``n`` is how many parts the code chose (devices,
    shards), not how much data there is, so the copies do not grow with the data or the steps."""
    if "." in name or not walks_equal_parts(facts, loops[-1], place.function(facts)):
        return False
    return len(loops) == 1 or _reset_in(loops[-2], name)


def _reset_in(loop: cst.CSTNode, name: str) -> bool:
    """The loop binds ``name`` afresh each iteration: as its target, or unconditionally in its
    body from something else."""
    if isinstance(loop, cst.For) and name in bound_names(loop.target):
        return True
    body = getattr(loop, "body", None)
    if not isinstance(body, cst.IndentedBlock):
        return False
    for statement in body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and any(dotted_name(t.target) == name for t in small.targets):
                if name not in dotted_names_in(small.value):
                    return True
    return False
