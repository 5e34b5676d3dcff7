"""LL504 tf1-graph-growth: graph-mode TensorFlow ops built inside the loop that runs the session."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from functools import cached_property

from leaklint.analysis.calls import caller_of
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.guards import lazily_built
from leaklint.analysis.names import dotted_name
from leaklint.analysis.places import Place, walk_with_ancestors
from leaklint.analysis.structure import FunctionInfo, bound_names, inner_iterable
from leaklint.analysis.syntax import subscript_base
from leaklint.analysis.iterations import few_runs, walks_variables
from leaklint.analysis.tensorflow import COLLECTION, OP_METHODS, Site, TfGraph, is_graph_reset, is_op_api, tf_api, tf_graph
from leaklint.analysis.torch_api import LOOPS_OR_FUNCTIONS, TENSORFLOW_CODE, TENSORFLOW_ROOTS
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names
from leaklint.rule import Measured, Rule, Violation

#: Identifiers one of which every graph-mode file holds (sessions, placeholders, v1 behaviour,
#: the Keras backend's session and symbolic gradients): see ``leaklint.analysis.tensorflow``.
GRAPH_MODE_NAMES = Names(
    "Session", "InteractiveSession", "MonitoredSession", "MonitoredTrainingSession", "SingularMonitoredSession",
    "Supervisor", "disable_v2_behavior", "disable_eager_execution", "placeholder", "placeholder_with_default",
    "get_default_session", "gradients", "get_session", "function",
)


class Tf1GraphGrowth(Rule):
    code = "LL504"
    name = "tf1-graph-growth"
    severity = Severity.LEAK
    summary = "TensorFlow 1 graph ops are built inside the loop that runs the session, so the graph grows every step."
    help = (
        "build the op once, before the loop (feed changing values through a placeholder), and call "
        "sess.graph.finalize() before the loop so that any op built later raises instead of leaking"
    )
    #: What a file must contain before this rule can fire: TensorFlow, a call that only graph mode
    #: has (a session, a placeholder, v1 behaviour, Keras's backend session or symbolic gradients),
    #: and a loop or a function to repeat the building.
    needs = TENSORFLOW_CODE & GRAPH_MODE_NAMES & LOOPS_OR_FUNCTIONS
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(14, 0, 0), leaks=(69, 0))
    docs = """
## What it finds
Graph-mode TensorFlow (TF1, `tf.compat.v1` with `disable_v2_behavior()` or
`disable_eager_execution()`, standalone Keras 2 on that backend) that builds ops where the graph
is already being run: inside a loop whose body runs the graph (`sess.run(...)`, `tensor.eval()`,
`op.run()`, a `K.function` call, `K.get_value`), or in a function that runs the graph itself and
is called again and again (from a loop, from such a function, or by Keras as a callback hook).
An op is any call of a TensorFlow or Keras-backend function that adds to the graph
(`tf.assign`, `tf.no_op()`, `tf.constant`, `tf.image.encode_jpeg`, `tf.global_variables_initializer()`,
`tf.train.Saver()`, `tf.data.TFRecordDataset(...)`, `K.gradients`, `K.function`...), a method
that adds ops to a graph value (`var.assign(x)`, `iterator.get_next()`,
`iterator.make_initializer(dataset)`, `dataset.map(f)`, `optimizer.minimize(loss)`), a custom
op of a library the file loads (`ops = tf.load_op_library("op.so")`, then `ops.my_op(x)` or a name
bound to `ops.my_op`: the wrapper builds its op as `tf.*` functions do), an operator
on a graph tensor (`-t`, `t[0]`, `t * 2`, `t > 0.5`), or a call of a local function that builds
ops. A helper that hands the ops it builds back to its caller is reported at the call (build it
once, before the loop); one that builds and uses them without returning any (`saver =
tf.train.Saver(); saver.save(sess, path)`) is reported at its first op, where the fix goes (`return saver.save(sess, path)` hands back the
checkpoint's path, not the Saver). Graph tensors are known from what the file binds: results of TensorFlow
ops, `tf.trainable_variables()` (also filtered, `sorted(...)` or `list(...)`),
`graph.get_tensor_by_name(...)`, a Keras layer's `.output`, local functions returning them,
lists the file fills with them (`self.weights.append(tf.get_variable(...))`, also joined:
`self.weights + self.biases`); values fetched by `sess.run` are numpy and never count.
A method called through an object (`agent.load_params(p)` in a loop) is followed when the file
shows the object's class: built from a local class, passed as one by every caller, or a
parameter of a function that the file never calls (run from elsewhere), used only with
attributes that one local class of the file has, all of them (its methods, the `self.x` its
methods assign), methods among them.
A name rebound after its `def` (`resize = to_numpy_function(resize)`) no longer means that
function: calls made where the rebinding reaches run what it holds, which builds nothing the
file shows, and what they return is not taken for a graph tensor. Only a rebinding that surely
runs counts (not one under an `if`, in a loop or a `try`), `f = functools.partial(f, ...)` still
means `f`, and a nested function sees what the name held where that function was defined.

TensorFlow calls that build no op are known from a table with the documentation that says so
(`leaklint/analysis/tensorflow.py`): sessions, configuration and protocol buffers, file writers,
collections and scopes, `tf.load_op_library` itself, the TensorBoard projector plugin
(`projector.visualize_embeddings(writer, config)` only writes `projector_config.pbtxt`).

It stays quiet when the graph is finalized anywhere in the file (`sess.graph.finalize()`:
building an op after it raises), when the loop or function resets the graph first
(`tf.reset_default_graph()`, `K.clear_session()`) or builds in a graph of its own
(`with tf.Graph().as_default():`), in `@tf.function` code (traced once), in lambdas handed to
`tf.cond` / `tf.map_fn` (built with that op), for code that only builds the graph (a loop over
layers that runs nothing), and under a guard that builds once and keeps the result on an
attribute or a global (`if self._op is None: self._op = tf.assign(...)`). A loop that is one
pass over the model's variables builds one op per variable, once: a loop over them (`for v in
tf.trainable_variables()`, `model.layers`, a list the file fills with graph values, alone or
zipped with loaded arrays) or one whose item picks the variable the op is built
on (`tf.get_variable(name)`, `graph.get_tensor_by_name(name + ":0")`, or a lookup under `with
tf.variable_scope(block, reuse=True):`) and writes data into it (an `assign` of loaded weights,
not of a graph tensor, and not an op that computes with it) is reported only
where a loop around it or the callers of its function repeat the pass. A loop bounded by a
literal of at most five iterations is low confidence.

## Why it matters
In graph mode every op-building call adds nodes to the default graph, and nothing ever removes
them: not leaving the loop, not losing the Python reference, not closing the session. An op
built inside the training loop is built again every step, each copy with its constants (an
image passed to `tf.image.encode_jpeg` is embedded in the graph as a constant). The graph grows
step after step: memory climbs until the process is killed, and every `sess.run` gets slower
because the session has to process a bigger graph. The TensorFlow maintainers' diagnosis of such
reports is always the same: the program mixes graph construction with graph execution.

## Example
```python
train_loss = tf.Variable(0.0, trainable=False)
tf.summary.scalar("train_loss", train_loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for epoch in range(epochs):
        epoch_loss = run_epoch(sess)
        sess.run(tf.assign(train_loss, epoch_loss))   # a new Assign op (and constant) per epoch
```

## Use instead
```python
train_loss = tf.Variable(0.0, trainable=False)
loss_in = tf.placeholder(tf.float32, [])
record_loss = tf.assign(train_loss, loss_in)          # built once
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.graph.finalize()                             # any op built from here on raises
    for epoch in range(epochs):
        epoch_loss = run_epoch(sess)
        sess.run(record_loss, feed_dict={loss_in: epoch_loss})
```

## Fix safety
No automatic fix: building the op before the loop means turning what changes (a Python value,
an image, a neuron index) into a placeholder that is fed, and the op may depend on values only
the loop computes.

## Known false positives
A loop that builds a new model on purpose for each configuration without resetting the graph
(an experiment sweep in one process) grows the graph too, but the growth may be intended;
reset the graph per configuration or suppress with `# noqa: LL504`. A function called from a
loop only a few times (not once per step) is still reported: check how often it really runs.
leaklint cannot see ops built by another module's functions, nor objects whose class it cannot
find in the file. A parameter whose class is inferred from the attributes the function uses
(no caller in the file) may in fact be an object of another module with the same methods.

On bench/realcode most findings are true: a sampling helper of a TF1 seminar that builds a
`tf.assign` and a `tf.variables_initializer` on every call, DDPG agents that build their
target-update `tf.assign` ops inside `learn()`, and visualization tutorials (Hvass's, facenet's
`tmp/visualize.py`) that build a new loss and a whole `tf.gradients` subgraph for every image or
channel they optimize. Most TF1 training code there (Spinning Up, the TF1 tutorials) builds its
graph before the loop and is not reported. The false findings at first (a one-off gradient check
over a model's few weights, MTCNN's weight loading with one assign per variable, deepdream's
`tffunc` wrappers that return numpy arrays, Tacotron-2's `projector.visualize_embeddings`, which
only writes a config file) are fixed.

## References
- `tf.Graph.finalize` (makes a graph read-only, to catch ops added while it runs):
  https://www.tensorflow.org/api_docs/python/tf/Graph#finalize
- Training slower every iteration, `sess.run(tf.assign(lr, ...))` in the loop:
  https://github.com/smallcorgi/Faster-RCNN_TF/issues/10 and the fix
  https://github.com/smallcorgi/Faster-RCNN_TF/pull/16
- `sess.run(tf.truncated_normal(...))` in a helper called in the training loop:
  https://github.com/wbhu/DnCNN-tensorflow/issues/19
- Each epoch takes longer (ops created per epoch): https://github.com/tensorflow/tensorflow/issues/198
- New operations added to the graph after every `sess.run`: https://github.com/melodyguan/enas/issues/91
- Runtime repro: `leaklint verify LL504` measures the leaky and the fixed loop body.
"""
    VALID = (
        # a one-off check over the gradients of each weight: a pass over the model's variables
        """
import numpy as np
import tensorflow as tf

obs_ph = tf.placeholder(tf.float32, [None, 4])
rewards_ph = tf.placeholder(tf.float32, [None])
weights = [tf.Variable(tf.zeros([4, 2])), tf.Variable(tf.zeros([2]))]
qvalues = tf.matmul(obs_ph, weights[0]) + weights[1]
reference = rewards_ph + 0.99 * tf.stop_gradient(tf.reduce_max(qvalues, axis=1))
sess = tf.Session()
sess.run(tf.global_variables_initializer())
for chk_grad in tf.gradients(reference, weights):
    assert chk_grad is None or np.allclose(sess.run(chk_grad), sess.run(chk_grad * 0))
""",
        # built once before the loop; the loop feeds and fetches, and computes on numpy values
        """
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
x = tf.placeholder(tf.float32, [None, 4])
loss = tf.reduce_mean(tf.square(x))
train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(1000):
        loss_value, _ = sess.run([loss, train_op], {x: batch()})
        doubled = loss_value * 2.0
""",
        # the graph is finalized: building an op later would raise, not leak
        """
import tensorflow as tf
images = tf.placeholder(tf.uint8, [None, None, 3])
with tf.Session() as sess:
    sess.graph.finalize()
    for image in stream():
        sess.run(tf.image.encode_jpeg(images), {images: image})
""",
        # a loop that only builds the graph (layers), then a loop that only runs it
        """
import tensorflow as tf
net = tf.placeholder(tf.float32, [None, 64])
for width in (128, 64, 32):
    net = tf.layers.dense(net, width, activation=tf.nn.relu)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(100):
        sess.run(net, {"Placeholder:0": data()})
""",
        # a fresh graph per configuration
        """
import tensorflow as tf
for lr in (0.1, 0.01):
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32)
    loss = tf.square(x - 3.0)
    with tf.Session() as sess:
        print(sess.run(loss, {x: lr}))
""",
        # built lazily once and kept on the object
        """
import tensorflow as tf
class Restorer:
    def __init__(self, sess):
        self.sess = sess
        self._restore = None
    def restore(self, values):
        if self._restore is None:
            self._inputs = [tf.placeholder(v.dtype, v.shape) for v in tf.global_variables()]
            self._restore = tf.group(*[v.assign(p) for v, p in zip(tf.global_variables(), self._inputs)])
        self.sess.run(self._restore, dict(zip(self._inputs, values)))
restorer = Restorer(tf.Session())
for checkpoint in checkpoints:
    restorer.restore(checkpoint)
""",
        # a helper that builds its Saver once per graph and reuses it
        """
import tensorflow as tf
_savers = {}
def checkpoint(sess, path):
    graph = tf.get_default_graph()
    if graph not in _savers:
        _savers[graph] = tf.train.Saver()
    _savers[graph].save(sess, path)
with tf.Session() as sess:
    for step in range(10000):
        sess.run(train_op)
        if step % 500 == 0:
            checkpoint(sess, "ckpt/model")
""",
        # the input pipeline and its initializer built once; the epoch loop only runs the initializer
        """
import tensorflow.compat.v1 as tf
iterator = tf.data.Iterator.from_structure(tf.float32, tf.TensorShape([None, 16]))
batch = iterator.get_next()
init_train = iterator.make_initializer(tf.data.TFRecordDataset(train_files).map(parse).batch(32))
with tf.Session() as sess:
    for epoch in range(50):
        sess.run(init_train)
        run_until_exhausted(sess, batch)
""",
        # the name is rebound to what a wrapper returns: a function that runs ops built once
        # (on placeholders) and returns numpy, so the loop builds nothing
        """
import numpy as np
import tensorflow as tf

def compiled(*dtypes):
    inputs = [tf.placeholder(dtype) for dtype in dtypes]
    def wrap(build):
        output = build(*inputs)
        def run(*values):
            return output.eval(dict(zip(inputs, values)))
        return run
    return wrap

def normalize(image):
    return image / tf.reduce_max(image)
normalize = compiled(tf.float32)(normalize)

sess = tf.InteractiveSession()
images = tf.placeholder(tf.float32, [None, None, 3])
train_op = build_model(images)
for frame in frames():
    scaled = normalize(frame) * 255.0
    sess.run(train_op, {images: scaled - scaled.mean()})
""",
        # the same in a function: the nested helper calls the name after its rebinding
        """
import numpy as np
import tensorflow as tf

def as_numpy_function(build, dtype):
    value_in = tf.placeholder(dtype)
    value_out = build(value_in)
    return lambda value: value_out.eval({value_in: value})

def main(sess, steps):
    grad = tf.gradients(objective(), model_input)[0]

    def shrink(image):
        return tf.image.resize_bilinear(tf.expand_dims(image, 0), [64, 64])[0]
    shrink = as_numpy_function(shrink, tf.float32)

    def refine(image):
        for step in range(steps):
            image = shrink(image) + 0.5
            image += sess.run(grad, {model_input: image})
        return image / 255.0
    return refine(np.zeros((128, 128, 3)))
""",
        # pretrained weights loaded once, one assign per variable (picked by block and name)
        """
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

def restore_pretrained(sess, path):
    pretrained = np.load(path, allow_pickle=True).item()
    for block, tensors in pretrained.items():
        with tf.variable_scope(block, reuse=True):
            for key, array in tensors.items():
                sess.run(tf.get_variable(key).assign(array))

x = tf.placeholder(tf.float32, [None, 32])
train_op = build(x)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    restore_pretrained(sess, "encoder.npy")
    for step in range(10000):
        sess.run(train_op, {x: batch()})
""",
        # a one-off copy of a snapshot into the graph's tensors, looked up by the loop's item
        """
import tensorflow as tf
sess = tf.Session()
graph = tf.get_default_graph()
snapshot = read_snapshot("teacher.pkl")
for layer_name in snapshot:
    kernel = graph.get_tensor_by_name(f"{layer_name}/kernel:0")
    sess.run(tf.assign(kernel, snapshot[layer_name]))
""",
        # the projector plugin writes a config file next to the event files: no op, however
        # often the training loop links the embeddings again
        """
import tensorflow as tf
from tensorflow.contrib.tensorboard.plugins import projector

def link_embeddings(writer, table, labels_path):
    config = projector.ProjectorConfig()
    entry = config.embeddings.add()
    entry.tensor_name = table.name
    entry.metadata_path = labels_path
    projector.visualize_embeddings(writer, config)

word_vectors = tf.get_variable("word_vectors", [5000, 64])
writer = tf.summary.FileWriter("logs")
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(20000):
        sess.run(train_op)
        if step % 1000 == 0:
            link_embeddings(writer, word_vectors, "vocab.tsv")
""",
        # a custom op built once, on placeholders; the loop feeds it
        """
import tensorflow as tf
nms_ops = tf.load_op_library("./build/fast_nms.so")
boxes = tf.placeholder(tf.float32, [None, 4])
scores = tf.placeholder(tf.float32, [None])
keep = nms_ops.fast_nms(boxes, scores, iou_threshold=0.5)
with tf.Session() as sess:
    for frame in camera_frames():
        b, s = propose(frame)
        print(sess.run(keep, {boxes: b, scores: s}))
""",
        # weights copied into a list of variables the class fills, by a method called once,
        # before the loop: one assign per variable, once (the loop over the list is a pass
        # over the model's variables, not over steps)
        """
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()

class Replica:
    def __init__(self, sizes):
        self.params = []
        for i, size in enumerate(sizes):
            self.params.append(tf.get_variable(f"p{i}", [size]))
        self.loss = tf.add_n([tf.reduce_sum(tf.square(p)) for p in self.params])
        self.train_op = tf.train.AdamOptimizer(1e-3).minimize(self.loss)
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())

    def pull(self, arrays):
        for param, array in zip(self.params, arrays):
            self.sess.run(param.assign(array))

    def train(self):
        return self.sess.run([self.loss, self.train_op])[0]

def run_worker(replica, master, steps):
    replica.pull(master.initial_weights())
    for step in range(steps):
        print(replica.train())
""",
        # a comprehension over the variables a class keeps in a list, in a method called once,
        # after the loop: one op per variable, once
        """
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()

class Learner:
    def __init__(self, sizes):
        self.weights = []
        for i, n in enumerate(sizes):
            self.weights.append(tf.get_variable(f"w{i}", [n]))
        self.inputs = [tf.placeholder(tf.float32, w.shape) for w in self.weights]
        self.assign = [w.assign(p) for w, p in zip(self.weights, self.inputs)]
        self.sess = tf.Session()

    def set_weights(self, values):
        self.sess.run(self.assign, dict(zip(self.inputs, values)))

    def norms(self):
        return [self.sess.run(tf.norm(w)) for w in self.weights]

def sync(learner, server, rounds):
    for r in range(rounds):
        learner.set_weights(server.pull())
    return learner.norms()
""",
        # `env` is no object of the file: the one class with a `step` method (which builds an
        # op and runs it) has no `reset`, so `env.step(...)` in the loop is not taken for it
        """
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()

class Annealer:
    def __init__(self, sess):
        self.sess = sess
        self.rate = tf.Variable(1.0, trainable=False)

    def step(self, decay):
        self.sess.run(self.rate.assign(self.rate * decay))

def rollout(env, act, steps):
    obs = env.reset()
    for t in range(steps):
        obs, reward, done, info = env.step(act(obs))
        if done:
            obs = env.reset()
""",
        # eager TensorFlow 2: ops run at once, no graph grows
        """
import tensorflow as tf
for step in range(1000):
    x = tf.constant(data())
    print(tf.reduce_sum(x * 2).numpy())
""",
    )
    INVALID = (
        # a checkpoint helper that builds a Saver on every call and returns what save() returns
        # (the checkpoint's path, not an op): the Saver line is where the fix goes
        """
import os
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
def save_checkpoint(sess, model_dir, epoch):
    saver = tf.train.Saver(max_to_keep=3)  # expect: LL504
    return saver.save(sess, os.path.join(model_dir, "model.ckpt"), global_step=epoch)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for epoch in range(300):
        sess.run(train_op)
        print(save_checkpoint(sess, "ckpt", epoch))
""",
        # a target-network sync that pairs the variables by name (sorted lists of
        # tf.trainable_variables()) and builds one assign op per pair on every call
        """
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
def sync_target(sess, source_scope, target_scope):
    src = sorted([v for v in tf.trainable_variables() if v.name.startswith(source_scope)], key=lambda v: v.name)
    dst = sorted([v for v in tf.trainable_variables() if v.name.startswith(target_scope)], key=lambda v: v.name)
    ops = []
    for s, d in zip(src, dst):
        ops.append(d.assign(s))  # expect: LL504
    sess.run(ops)
with tf.Session() as sess:
    for step in range(1_000_000):
        if step % 10_000 == 0:
            sync_target(sess, "online", "target")
        sess.run(train_op)
""",
        """
import tensorflow as tf
train_loss = tf.Variable(0.0, trainable=False)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for epoch in range(100):
        epoch_loss = run_epoch(sess)
        sess.run(tf.assign(train_loss, epoch_loss))  # expect: LL504
""",
        """
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
features, labels = tf.data.make_one_shot_iterator(dataset).get_next()
loss = tf.reduce_mean(tf.square(features - labels))
with tf.Session() as sess:
    while True:
        value, scaled = sess.run([loss, -loss])  # expect: LL504
""",
        # a helper that builds and runs its op, called per image
        """
import tensorflow as tf
def encode(sess, image):
    op = tf.image.encode_jpeg(image)  # expect: LL504
    return sess.run(op)
with tf.Session() as sess:
    for image in images:
        write(encode(sess, image))
""",
        # a method of an object built in the file, called from a loop
        """
import tensorflow as tf
class Model:
    def __init__(self):
        self.logits = tf.layers.dense(tf.placeholder(tf.float32, [None, 8]), 3)
        self.sess = tf.Session()
    def predict(self, x):
        probs = tf.nn.softmax(self.logits)  # expect: LL504
        return self.sess.run(probs, {"Placeholder:0": x})
model = Model()
for request in requests:
    model.predict(request)
""",
        # a tf.data pipeline and its initializer built again every epoch of the session
        """
import tensorflow.compat.v1 as tf
iterator = tf.data.Iterator.from_structure(tf.float32, tf.TensorShape([None, 16]))
batch = iterator.get_next()
with tf.Session() as sess:
    for epoch in range(50):
        shards = tf.data.TextLineDataset(train_files)  # expect: LL504
        sess.run(iterator.make_initializer(shards.map(parse).batch(32)))  # expect: LL504
        run_until_exhausted(sess, batch)
""",
        # a helper that makes a Saver and saves, returning nothing: reported at the Saver it makes
        """
import tensorflow as tf
def checkpoint(sess, path):
    saver = tf.train.Saver(max_to_keep=3)  # expect: LL504
    saver.save(sess, path)
with tf.Session() as sess:
    for step in range(10000):
        sess.run(train_op)
        if step % 500 == 0:
            checkpoint(sess, "ckpt/model")
""",
        # a rebinding under a flag, a partial of the op-building function, an op computed with
        # a variable picked by a per-task scope: all still build ops every step
        """
import functools
import tensorflow as tf

def augment(images):
    return tf.image.random_flip_left_right(images)

def preprocess(images, size):
    return tf.image.resize(images, [size, size])

if USE_NUMPY_PIPELINE:
    augment = to_numpy_function(augment)
preprocess = functools.partial(preprocess, size=224)
x = tf.placeholder(tf.float32, [None, 128])
features = encoder(x)
with tf.Session() as sess:
    for task, (images, inputs) in mixed_task_stream():
        flipped = sess.run(augment(images))  # expect: LL504
        batch = sess.run(preprocess(flipped))  # expect: LL504
        with tf.variable_scope(task, reuse=True):
            logits = tf.matmul(features, tf.get_variable("head"))  # expect: LL504
        print(sess.run(logits, {x: inputs}).argmax(-1), batch.shape)
""",
        # a nested function sees what the name holds where it is defined: a rebinding after its
        # calls does not change what those calls ran
        """
import numpy as np
import tensorflow as tf

def as_numpy_function(build, dtype):
    value_in = tf.placeholder(dtype)
    value_out = build(value_in)
    return lambda value: value_out.eval({value_in: value})

def main(sess, steps):
    grad = tf.gradients(objective(), model_input)[0]

    def shrink(image):
        return tf.image.resize_bilinear(tf.expand_dims(image, 0), [64, 64])[0]

    def refine(image):
        for step in range(steps):
            image = shrink(image) + 0.5  # expect: LL504
            image += sess.run(grad, {model_input: image})
        return image / 255.0
    result = refine(np.zeros((128, 128, 3)))
    shrink = as_numpy_function(shrink, tf.float32)
    return result, shrink
""",
        # one assign per variable picked by name, but for every update a stream delivers
        """
import tensorflow as tf
x = tf.placeholder(tf.float32, [None, 8])
train_op = build(x)
with tf.Session() as sess:
    for update in parameter_server_updates():
        for name, value in update.items():
            sess.run(tf.get_variable(name).assign(value))  # expect: LL504
        sess.run(train_op, {x: batch()})
""",
        # a pass over the variables that every episode repeats
        """
import tensorflow as tf
def reset_to(sess, weights):
    for name, value in weights.items():
        sess.run(tf.get_variable(name).assign(value))  # expect: LL504
with tf.Session() as sess:
    initial = sess.run({v.op.name: v for v in tf.trainable_variables()})
    for episode in range(100000):
        reset_to(sess, initial)
        play(sess)
""",
        # a decay op per variable, built again every epoch
        """
import tensorflow as tf
with tf.Session() as sess:
    for epoch in range(100):
        for v in tf.trainable_variables():
            sess.run(v.assign(v * 0.999))  # expect: LL504
""",
        # the wrappers of a loaded op library build their op like any tf.* function: one per frame
        """
import tensorflow as tf
nms_ops = tf.load_op_library("./build/fast_nms.so")
with tf.Session() as sess:
    for frame in camera_frames():
        b, s = propose(frame)
        print(sess.run(nms_ops.fast_nms(b, s, iou_threshold=0.5)))  # expect: LL504
""",
        # the same through a name bound to the wrapper, in a helper that runs what it builds
        """
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
_warp_module = tf.load_op_library("warp_ops.so")
bilinear_warp = _warp_module.bilinear_warp
def warped(sess, image, flow):
    return sess.run(bilinear_warp(image, flow))  # expect: LL504
sess = tf.Session()
for image, flow in video_pairs():
    save(warped(sess, image, flow))
""",
        # a method of the one class of the file whose attributes a parameter is used with (its
        # function is called from elsewhere), called once per episode: a new assign op each time
        """
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()

class Policy:
    def __init__(self):
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.obs = tf.placeholder(tf.float32, [None, 8])
            self.temperature = tf.Variable(1.0, trainable=False)
            self.logits = tf.layers.dense(self.obs, 4) / self.temperature
            init = tf.global_variables_initializer()
        self.sess = tf.Session(graph=self.graph)
        self.sess.run(init)

    def set_temperature(self, value):
        with self.graph.as_default():
            self.sess.run(self.temperature.assign(value))  # expect: LL504

    def act(self, obs):
        return self.sess.run(self.logits, {self.obs: obs}).argmax(-1)

def anneal(policy, env, episodes):
    for episode in range(episodes):
        policy.set_temperature(max(0.1, 1.0 - episode / episodes))
        obs, done = env.reset(), False
        while not done:
            obs, reward, done, info = env.step(policy.act(obs[None])[0])
""",
        # variables the class keeps in a list it fills, written with new assign ops by a method
        # called every round
        """
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()

class Replica:
    def __init__(self, sizes):
        self.params = []
        for i, size in enumerate(sizes):
            self.params.append(tf.get_variable(f"p{i}", [size]))
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())

    def pull(self, arrays):
        for param, array in zip(self.params, arrays):
            self.sess.run(param.assign(array))  # expect: LL504

replica = Replica([10, 20])
for round_index in range(10000):
    replica.pull(fetch_from_master(round_index))
""",
        # a local function that only builds ops, called in the loop: reported at the call
        """
import tensorflow as tf
def mask_op(mask):
    return tf.where(tf.nn.max_pool2d(mask, 5, 5, "VALID") > 0.0)
with tf.Session() as sess:
    for step in range(1000):
        blocks = mask_op(tf.constant(random_mask()))  # expect: LL504
        sess.run(blocks)
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A graph-mode loop that builds an Assign op (and its constant) every iteration, vs one
        that feeds the value into an op built once. What grows is the graph, in TensorFlow's
        native heap."""

        requires = ("tensorflow",)
        tensors = False
        host_meter = "heap"

        def setup(self, ctx):
            import tensorflow as tf
            ctx.graph = tf.Graph()
            with ctx.graph.as_default():
                ctx.variable = tf.compat.v1.Variable(tf.zeros([256]), trainable=False)
                ctx.value_in = tf.compat.v1.placeholder(tf.float32, [256])
                ctx.assign = tf.compat.v1.assign(ctx.variable, ctx.value_in)
                init = tf.compat.v1.global_variables_initializer()
            ctx.sess = tf.compat.v1.Session(graph=ctx.graph)
            ctx.sess.run(init)
            ctx.values = [float(i) for i in range(256)]

        def leaky(self, ctx):
            import tensorflow as tf
            with ctx.graph.as_default():
                ctx.sess.run(tf.compat.v1.assign(ctx.variable, ctx.values))

        def fixed(self, ctx):
            ctx.sess.run(ctx.assign, {ctx.value_in: ctx.values})


# --- detection ------------------------------------------------------------------------------------
_OP_NODES = (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.Subscript, cst.Comparison)
_ORDER = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual)


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    if not facts.imports.imports_anything_from(*TENSORFLOW_ROOTS):
        return
    tf = tf_graph(facts)
    if not tf.graph_mode or tf.finalized:
        return
    yield from _Growth(facts, tf).violations()


class _Growth:
    """Which code runs again and again while the same graph is run, and which ops it builds."""

    def __init__(self, facts: ModuleFacts, tf: TfGraph) -> None:
        self.facts = facts
        self.tf = tf
        structure = facts.structure
        self.traced = {info for info in structure.functions.values() if _is_traced(facts, info)}
        self.callees = tf.callee_of
        self.by_caller = tf.calls_by_caller
        self.direct_ops = self._direct_ops()
        self.runs = self._closure({f for f, places in self._direct_runs().items() if places})
        self.resets = {f for f in structure.functions.values() if _resets_graph(facts, tf, f.node.body)}  # type: ignore[union-attr]
        self.ops_by_function: dict[FunctionInfo, list[tuple[Place, str]]] = {}
        for place, what in self.direct_ops:
            function = self._function(place)
            if not lazily_built(facts, place, function):
                self.ops_by_function.setdefault(function, []).append((place, what))
        self.builds = self._closure(set(self.ops_by_function), through=lambda callee: callee not in self.resets)
        self.builds -= self.traced | self.resets
        self.runs -= self.traced
        self.repeated = tf.repeated

    # --- per function ---------------------------------------------------------------------------
    def _function(self, place: Place) -> FunctionInfo:
        return caller_of(place, self.facts)

    def _direct_ops(self) -> list[tuple[Place, str]]:
        """Every op-building node that runs when its function does (not in lambdas, which TF
        calls once while building the op they are passed to), with what it builds."""
        found = []
        for node, path in walk_with_ancestors(self.facts.module, lambda n: isinstance(n, _OP_NODES)):
            place = Place(node, path)
            if isinstance(place.scope, cst.Lambda):
                continue
            what = self._op(node, place)
            if what is not None:
                found.append((place, what))
        return found

    def _op(self, node: cst.CSTNode, place: Place) -> str | None:
        tf = self.tf
        scopes = tf.scopes_of(place)
        if isinstance(node, cst.Call):
            qualified = self.facts.imports.resolve(node.func)
            if is_op_api(qualified):
                return f"'{qualified.rsplit('.', 1)[-1]}'"  # type: ignore[union-attr]
            func = node.func
            if qualified is None and isinstance(func, cst.Attribute) and func.attr.value in OP_METHODS:
                if tf.graph_kind(func.value, scopes) is not None:
                    return f"'.{func.attr.value}()'"
            if qualified is None and tf.is_custom_op_call(node, scopes):
                return f"the custom op '{self.facts.describe(func)}'"
            if qualified is None and tf.is_optimizer_call(node, scopes):
                return f"the optimizer's '{func.attr.value}'"  # type: ignore[attr-defined]
            return None
        parent = place.parent
        if isinstance(node, cst.Subscript):
            if isinstance(parent, (cst.AssignTarget, cst.Del)) or (isinstance(parent, cst.AugAssign) and parent.target is node):
                return None
            return "a slice" if tf.is_tensor(node.value, scopes) else None
        if isinstance(node, cst.BinaryOperation):
            if tf.is_tensor(node.left, scopes) or tf.is_tensor(node.right, scopes):
                return "an arithmetic op"
            return None
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, (cst.Minus, cst.Plus, cst.BitInvert)) and tf.is_tensor(node.expression, scopes):
                return "an arithmetic op"
            return None
        if isinstance(node, cst.Comparison):
            operands = [node.left, *(c.comparator for c in node.comparisons)]
            if any(isinstance(c.operator, _ORDER) for c in node.comparisons) and any(tf.is_tensor(o, scopes) for o in operands):
                return "a comparison op"
        return None

    def _direct_runs(self) -> dict[FunctionInfo, list[Place]]:
        runs: dict[FunctionInfo, list[Place]] = {}
        for place in self.tf.calls:
            if isinstance(place.scope, cst.Lambda):
                continue
            if self.tf.runs_graph(place.node, place):  # type: ignore[arg-type]
                runs.setdefault(self._function(place), []).append(place)
        self.run_places = {id(p.node) for places in runs.values() for p in places}
        return runs

    def _closure(self, seeds: set[FunctionInfo], through=lambda callee: True) -> set[FunctionInfo]:
        """``seeds`` and every function that calls one of them (through local calls)."""
        found = set(seeds)
        changed = True
        while changed:
            changed = False
            for caller, calls in self.by_caller.items():
                if caller in found:
                    continue
                if any(callee in found and callee is not caller and through(callee) for _, callee in calls):
                    found.add(caller)
                    changed = True
        return found

    # --- where ops pile up ------------------------------------------------------------------------
    def _runs_here(self, place: Place) -> bool:
        call = place.node
        if id(call) in self.run_places:
            return True
        callee = self.callees.get(id(call))
        return callee is not None and callee in self.runs

    @cached_property
    def run_loops(self) -> set[int]:
        """Loops whose body runs the graph (directly or through the functions it calls)."""
        loops: set[int] = set()
        for place in self.tf.calls:
            if isinstance(place.scope, cst.Lambda):
                continue
            if self._runs_here(place):
                loops.update(id(loop) for loop in place.loop_nodes)
        return loops

    @cached_property
    def reset_loops(self) -> set[int]:
        """Loops whose body resets the graph or builds in a graph of its own."""
        loops: set[int] = set()
        for place in self.tf.calls:
            call = place.node
            callee = self.callees.get(id(call))
            if is_graph_reset(self.facts.imports.resolve(call.func)) or (callee is not None and callee in self.resets):  # type: ignore[attr-defined]
                loops.update(id(loop) for loop in place.loop_nodes)
        return loops

    def _builder_call(self, place: Place) -> FunctionInfo | None:
        callee = self.callees.get(id(place.node))
        if callee is not None and callee in self.builds and callee not in self.runs:
            return callee
        return None

    def violations(self) -> Iterator[Violation]:
        """Each op built again and again, at the line to change: an op in the loop itself; the call
        of a helper that hands the ops it builds back (build them once, before the loop); or the
        first op of a helper that builds and uses its ops without returning any (``saver =
        tf.train.Saver(); saver.save(...)``: build it once, or cache it, in the helper)."""
        candidates: list[tuple[Place, str, Place]] = [(place, what, place) for place, what in self.direct_ops]
        for place in self.tf.calls:
            callee = self._builder_call(place)
            if callee is None or isinstance(place.scope, cst.Lambda):
                continue
            built = None if self._hands_back_ops(callee) else self._first_op(callee, set())
            if built is not None:
                candidates.append((*built, place))  # the helper keeps its ops to itself: fix it there
            else:
                candidates.append((place, f"'{callee.name}()', which builds graph ops,", place))
        op_nodes = {id(place.node) for place, _, _ in candidates}
        reported: set[tuple[int, int | None]] = set()
        for place, what, repeated in candidates:
            if any(id(node) in op_nodes for node in place.path[place.scope_index + 1:]):
                continue  # part of a bigger op expression, reported with it
            found = self._per_iteration(repeated)
            if found is None:
                continue
            confidence, where = found
            node = place.node
            key = (id(place.statement() or node), self.facts.line_of(node))
            if key in reported:
                continue
            reported.add(key)
            if repeated is not place:
                helper = self._function(place).name
                where = f"each time '{helper}()' is called at line {self.facts.line_of(repeated.node)}, {where}"
            yield Violation(
                node=node,
                message=(
                    f"'{self.facts.describe(node)}' adds {what} to the TensorFlow graph {where}: ops are never "
                    "removed from a graph, so the graph and the memory it holds grow with every run"
                ),
                confidence=confidence,
                statement=place.statement(),
            )

    def _hands_back_ops(self, function: FunctionInfo) -> bool:
        """``function`` returns (or yields) an op it builds, a name bound to one, or what a
        building helper returns: its caller receives the ops, so the call is what to move."""
        if function.node is None:
            return True
        ops = {id(place.node) for place, _ in self.direct_ops if self._function(place) is function}
        built_names: set[str] = set()
        returns = []
        for node in walk(function.node.body, into=not_into_scopes):
            if isinstance(node, cst.Assign) and self._builds_in(node.value, ops):
                for target in node.targets:  # x = op; metrics[key] = op
                    built_names.update(bound_names(target.target))
                    built_names.add(subscript_base(target.target) or "")
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                if any(self._builds_in(arg.value, ops) for arg in node.args):  # ops.append(op)
                    built_names.add(dotted_name(node.func.value) or "")
            elif isinstance(node, (cst.Return, cst.Yield)) and node.value is not None:
                returns.append(node.value)
        built_names.discard("")
        return any(self._builds_in(value, ops) or _hands_back_names(value, built_names) for value in returns)

    def _builds_in(self, expr: cst.BaseExpression, ops: set[int]) -> bool:
        """``expr`` holds one of ``ops`` or a call of a helper that builds ops."""
        return any(
            id(node) in ops or (isinstance(node, cst.Call) and self.callees.get(id(node)) in self.builds)
            for node in walk(expr)
        )

    def _first_op(self, function: FunctionInfo, seen: set[FunctionInfo]) -> tuple[Place, str] | None:
        """The first op ``function`` builds on every call, itself or through the helpers it calls
        (in the order the function's lines run)."""
        seen.add(function)
        line = self.facts.line_of
        found = [(line(place.node) or 0, (place, what)) for place, what in self.ops_by_function.get(function, [])]
        for place, callee in self.by_caller.get(function, []):
            if callee in self.builds and callee not in seen:
                inner = self._first_op(callee, seen)
                if inner is not None:
                    found.append((line(place.node) or 0, inner))
        return min(found, key=lambda item: item[0])[1] if found else None

    def _walks_model(self, place: Place, loop: cst.CSTNode) -> bool:
        """``loop`` is a pass over the model's variables, not over steps or data: it iterates
        them (``for v in tf.trainable_variables()``, ``model.layers``), or each iteration picks
        the variable the op at ``place`` is built on by the loop's item (``for name, value in
        weights.items(): sess.run(tf.get_variable(name).assign(value))``). One pass adds one op
        per variable, once: only a loop or caller that repeats the pass grows the graph."""
        if walks_variables(self.facts, loop) or self._iterates_graph_values(loop, place):
            return True
        # only an assignment to the picked variable (loading weights): `tf.matmul(features,
        # tf.get_variable("head"))` under a per-task scope computes on the step's data
        if not self._assigns(place.node):
            return False
        picked = [operand for operand in _operands(place.node) if self.tf.picked_by(operand, loop, place)]
        if not picked:
            return False
        scopes = self.tf.scopes_of(place)  # the value written is data (loaded weights), not a graph tensor
        return not any(
            self.tf.graph_kind(arg.value, scopes) is not None for arg in place.node.args if all(arg.value is not p for p in picked)  # type: ignore[attr-defined]
        )

    def _iterates_graph_values(self, loop: cst.CSTNode, place: Place) -> bool:
        """``for var, value in zip(self.weights + self.biases, loaded)``: a loop over a list the
        file fills with graph values (variables, tensors: see ``TfGraph.contents``), or zipped
        with one, runs once per value of the graph, not once per step; so does a comprehension
        each ``for`` of which iterates such a list (``[sess.run(w * 2.0) for w in self.weights]``)."""
        if isinstance(loop, cst.For):
            iterables = [loop.iter]
        elif isinstance(loop, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            iterables = []
            comp_for: cst.CompFor | None = loop.for_in
            while comp_for is not None:
                iterables.append(comp_for.iter)
                comp_for = comp_for.inner_for_in
        else:
            return False
        here = self.tf.scopes_of(place)
        site = Site(here.scopes, self.tf.order.get(id(loop), -1), here.loops - {id(loop)})
        return all(self._graph_values_iterated(iterable, site) for iterable in iterables)

    def _graph_values_iterated(self, iterable: cst.BaseExpression, site: Site) -> bool:
        """``iterable`` is a list of graph values, or ``zip`` / ``enumerate`` over one."""
        iterable = inner_iterable(iterable)
        sources = [iterable]
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value in ("zip", "enumerate"):
            if self.facts.imports.resolve(iterable.func) is None:
                sources = [inner_iterable(a.value) for a in iterable.args if a.keyword is None and not a.star]
                if iterable.func.value == "enumerate":
                    sources = sources[:1]
        return any(self.tf.graph_kind(source, site) == COLLECTION for source in sources)

    def _assigns(self, node: cst.CSTNode) -> bool:
        """``var.assign(value)`` (``assign_add``, ``assign_sub``, ``load``) or ``tf.assign(var, value)``."""
        if not isinstance(node, cst.Call):
            return False
        if isinstance(node.func, cst.Attribute) and self.facts.imports.resolve(node.func) is None:
            return node.func.attr.value in _ASSIGN_METHODS
        return tf_api(self.facts.imports.resolve(node.func)) in _ASSIGN_METHODS

    def _per_iteration(self, place: Place) -> tuple[Confidence, str] | None:
        function = self._function(place)
        if function in self.traced or function in self.resets or _in_fresh_graph(self.facts, self.tf, place):
            return None
        if lazily_built(self.facts, place, function):
            return None
        found: tuple[Confidence, str] | None = None
        walks: set[int] = set()
        for loop in reversed(place.loop_nodes):
            if id(loop) in self.reset_loops:
                return None
            if id(loop) in self.run_loops:
                if self._walks_model(place, loop):
                    walks.add(id(loop))  # one op per variable: grows only if something repeats the pass
                    continue
                bounded = few_runs(self.facts, [outer for outer in place.loop_nodes if id(outer) not in walks])
                confidence = Confidence.LOW if bounded else Confidence.HIGH
                found = confidence, f"on every iteration of the loop at line {self.facts.line_of(loop)}, which runs the graph"
                break
        if (found is None or found[0] is Confidence.LOW) and function in self.runs and function in self.repeated:
            confidence, why = self.repeated[function]
            if found is None or confidence.rank > found[0].rank:
                found = confidence, f"on every call of '{function.name}', which runs the graph and is {why}"
        return found


#: Ops that write a value into an existing variable.
_ASSIGN_METHODS = frozenset({"assign", "assign_add", "assign_sub", "load"})


def _operands(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """The values an op (or a call of a building helper) is built on: the receiver of a method
    and the arguments of a call, the operands of an operator, what a slice slices."""
    if isinstance(node, cst.Call):
        receiver = [node.func.value] if isinstance(node.func, cst.Attribute) else []
        return receiver + [arg.value for arg in node.args]
    if isinstance(node, cst.BinaryOperation):
        return [node.left, node.right]
    if isinstance(node, cst.UnaryOperation):
        return [node.expression]
    if isinstance(node, cst.Subscript):
        return [node.value]
    if isinstance(node, cst.Comparison):
        return [node.left, *(c.comparator for c in node.comparisons)]
    return []


def _hands_back_names(value: cst.BaseExpression, names: set[str]) -> bool:
    """``value`` hands back one of ``names`` (the ops a helper built) itself, not only what a
    method of it returns (``return saver.save(sess, path)`` returns the checkpoint's path)."""
    receivers = {
        id(node.func.value) for node in walk(value) if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
    }
    return any(
        isinstance(node, (cst.Name, cst.Attribute)) and id(node) not in receivers and dotted_name(node) in names
        for node in walk(value)
    )


def _is_traced(facts: ModuleFacts, info: FunctionInfo) -> bool:
    """Decorated with ``tf.function`` (traced once per signature, not run op by op), or nested in such a function."""
    current: FunctionInfo | None = info
    while current is not None:
        node = current.node
        if node is not None:
            for decorator in node.decorators:
                expr = decorator.decorator
                qualified = facts.imports.resolve(expr.func if isinstance(expr, cst.Call) else expr)
                if tf_api(qualified) in ("function", "contrib.eager.defun", "autograph.to_graph"):
                    return True
        current = current.parent
    return False


def _resets_graph(facts: ModuleFacts, tf: TfGraph, body: cst.CSTNode) -> bool:
    """The code resets the default graph or builds in a graph of its own."""
    for node in walk(body, into=not_into_scopes):
        if isinstance(node, cst.Call) and is_graph_reset(facts.imports.resolve(node.func)):
            return True
        if isinstance(node, cst.WithItem) and _fresh_graph_context(facts, tf, node.item, body):
            return True
    return False


def _fresh_graph_context(facts: ModuleFacts, tf: TfGraph, item: cst.BaseExpression, region: cst.CSTNode) -> bool:
    """``with tf.Graph().as_default():`` or ``with g.as_default():`` for a ``g = tf.Graph()``
    made in ``region``."""
    if not (isinstance(item, cst.Call) and isinstance(item.func, cst.Attribute) and item.func.attr.value == "as_default"):
        return False
    graph = item.func.value
    if isinstance(graph, cst.Call):
        return tf_api(facts.imports.resolve(graph.func)) == "Graph"
    name = dotted_name(graph)
    if name is None:
        return False
    for node in walk(region, into=not_into_scopes):
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and tf_api(facts.imports.resolve(node.value.func)) == "Graph":
            if any(name in bound_names(t.target) for t in node.targets):
                return True
    return False


def _in_fresh_graph(facts: ModuleFacts, tf: TfGraph, place: Place) -> bool:
    """Inside ``with tf.Graph().as_default():`` (or a graph made in the same function)."""
    scope = place.scope
    region = scope.body if isinstance(scope, cst.FunctionDef) else facts.module
    for node in place.path[place.scope_index + 1:]:
        if isinstance(node, cst.With) and any(_fresh_graph_context(facts, tf, item.item, region) for item in node.items):
            return True
    return False
