"""LL511 (autograph-unrolled-loop): which loops inside a ``tf.function`` AutoGraph unrolls, how
sure the rule is, and which line it points at."""

from __future__ import annotations

import textwrap

from leaklint.findings import Confidence, Finding
from leaklint.registry import all_rules
from leaklint.testing import lint_snippet


def findings(source: str) -> list[Finding]:
    found, errors = lint_snippet(textwrap.dedent(source), [all_rules()["LL511"]], min_confidence=Confidence.LOW)
    assert errors == []
    return found


def confidences(source: str) -> dict[int, Confidence]:
    return {finding.line: finding.confidence for finding in findings(source)}


DECODER = """
    import tensorflow as tf

    cell = tf.keras.layers.GRUCell(64)

    @tf.function
    def decode(x, state, steps):
        for _ in range(steps):
            x, [state] = cell(x, [state])
        return x

    decode(tf.zeros([2, 64]), tf.zeros([2, 64]), STEPS)
    """


def test_a_bound_every_call_gives_as_a_literal_is_read_through_the_parameter():
    assert confidences(DECODER.replace("STEPS", "200")) == {8: Confidence.HIGH}
    assert "200 copies" in findings(DECODER.replace("STEPS", "200"))[0].message


def test_a_few_literal_iterations_are_a_small_unroll_and_not_reported():
    assert confidences(DECODER.replace("STEPS", "20")) == {}


def test_a_bound_passed_as_a_tensor_or_read_from_elsewhere_is_not_reported():
    # a tensor bound: AutoGraph builds a tf.while_loop; a config value: the file does not show it
    assert confidences(DECODER.replace("STEPS", "tf.constant(200)")) == {}
    assert confidences(DECODER.replace("STEPS", "config.steps")) == {}


def test_an_input_signature_makes_every_argument_a_tensor():
    source = DECODER.replace("STEPS", "200").replace(
        "@tf.function", "@tf.function(input_signature=[tf.TensorSpec([None, 64]), tf.TensorSpec([None, 64]), tf.TensorSpec([], tf.int32)])"
    )
    assert confidences(source) == {}


def test_a_bound_from_a_static_shape_is_medium_confidence():
    # a Python int while tracing, but how large only the data says
    source = """
        import tensorflow as tf

        cell = tf.keras.layers.LSTMCell(32)

        @tf.function
        def encode(inputs, state):
            for t in range(inputs.shape[1]):
                out, state = cell(inputs[:, t], state)
            return out
        """
    assert confidences(source) == {8: Confidence.MEDIUM}


def test_a_loop_that_only_computes_indices_or_walks_layers_is_not_reported():
    source = """
        import tensorflow as tf

        class Stack(tf.Module):
            def __init__(self, depth=48):
                self.depth = depth
                self.blocks = [tf.keras.layers.Dense(8) for _ in range(depth)]

            @tf.function
            def __call__(self, x):
                for i in range(self.depth):
                    x = self.blocks[i](x)
                for i in range(self.depth):
                    x = getattr(self, "blocks")[i](x)
                return x

        Stack()
        """
    assert confidences(source) == {}


TRAINER = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

    @tf.function
    def fit(x, y, epochs):
        for epoch in range(epochs):
            for b in range(x.shape[0] // 32):
                step(x[b * 32:(b + 1) * 32], y[b * 32:(b + 1) * 32])

    fit(tf.zeros([1024, 4]), tf.zeros([1024, 1]), epochs=5)
    """


def test_a_training_loop_inside_the_tf_function_is_reported_once_at_the_decorator():
    found = findings(TRAINER)
    assert [(finding.line, finding.confidence) for finding in found] == [(12, Confidence.HIGH)]
    assert "training loop of 'fit'" in found[0].message
    assert "tf.function on the training step" in found[0].help


def test_the_training_step_itself_as_the_tf_function_is_not_reported():
    source = TRAINER.replace("    @tf.function\n    def fit", "    def fit").replace("    def step(x, y):", "    @tf.function\n    def step(x, y):")
    assert confidences(source) == {}


def test_a_function_wrapped_by_a_tf_function_call_is_traced_too():
    source = """
        import tensorflow as tf

        cell = tf.keras.layers.GRUCell(64)

        def rollout(x, state, horizon=96):
            outputs = []
            for _ in range(horizon):
                x, [state] = cell(x, [state])
                outputs.append(x)
            return tf.stack(outputs)

        fast = tf.function(rollout)
        fast(tf.zeros([2, 64]), tf.zeros([2, 64]))
        """
    # the calls of the wrapper are calls of the function: the default, 96, holds
    assert confidences(source) == {8: Confidence.HIGH}
    assert "96 copies" in findings(source)[0].message
    assert confidences(source.replace("fast(tf.zeros([2, 64]), tf.zeros([2, 64]))", "fast(tf.zeros([2, 64]), tf.zeros([2, 64]), horizon=8)")) == {}


def test_a_loop_of_tensorflow_ops_alone_adds_a_few_nodes_per_iteration_and_is_not_reported():
    # each unrolled copy of `x = tf.tanh(x @ w)` is two nodes; of `cell(x)`, a whole layer
    source = DECODER.replace("STEPS", "200").replace("x, [state] = cell(x, [state])", "x = tf.tanh(x @ state)")
    assert confidences(source) == {}
