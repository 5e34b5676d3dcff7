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


ROLLOUT = """
    import tensorflow as tf

    cell = tf.keras.layers.GRUCell(64)

    def rollout(x, state, steps=96):
        for _ in range(steps):
            x, [state] = cell(x, [state])
        return x

    fast = tf.function(rolloutSIGNATURE)
    fast(tf.zeros([2, 64]), tf.zeros([2, 64])ARGUMENT)
    """
SIGNATURE = ", [tf.TensorSpec([None, 64]), tf.TensorSpec([None, 64]), tf.TensorSpec([], tf.int32)]"


def rollout(signature: str = "", argument: str = "") -> str:
    return ROLLOUT.replace("SIGNATURE", signature).replace("ARGUMENT", argument)


def test_a_function_wrapped_by_a_tf_function_call_is_traced_too():
    # the calls of the wrapper are calls of the function: the default, 96, holds
    assert confidences(rollout()) == {7: Confidence.HIGH}
    assert "96 copies" in findings(rollout())[0].message
    assert confidences(rollout(argument=", steps=8")) == {}


def test_a_loop_of_tensorflow_ops_alone_adds_a_few_nodes_per_iteration_and_is_not_reported():
    # each unrolled copy of `x = tf.tanh(x @ w)` is two nodes; of `cell(x)`, a whole layer
    source = DECODER.replace("STEPS", "200").replace("x, [state] = cell(x, [state])", "x = tf.tanh(x @ state)")
    assert confidences(source) == {}


def test_an_input_signature_passed_by_position_makes_the_arguments_tensors_too():
    # tf.function(fn, input_signature): the signature is tf.function's second parameter
    assert confidences(rollout(SIGNATURE, ", 500")) == {}
    assert confidences(rollout("", ", 500")) == {7: Confidence.HIGH}


def test_a_parameter_the_body_rebinds_to_a_tensor_is_a_tensor_bound():
    source = DECODER.replace("STEPS", "200").replace(
        "        for _ in range(steps):", "        steps = tf.minimum(steps, 512 - tf.shape(x)[1])\n        for _ in range(steps):"
    )
    assert confidences(source) == {}


def test_the_count_of_a_range_with_a_start_and_a_step_is_its_length():
    assert confidences(DECODER.replace("range(steps)", "range(0, steps, 64)").replace("STEPS", "512")) == {}
    found = findings(DECODER.replace("range(steps)", "range(steps - 1, -1, -1)").replace("STEPS", "200"))
    assert [(f.line, f.confidence) for f in found] == [(8, Confidence.HIGH)] and "200 copies" in found[0].message


def test_layers_picked_through_a_local_name_and_a_list_of_levels_are_not_reported():
    source = """
        import tensorflow as tf

        class Encoder(tf.keras.Model):
            def __init__(self, depth=24):
                super().__init__()
                self.blocks = [tf.keras.layers.Dense(64) for _ in range(depth)]
                self.head = tf.keras.layers.Conv2D(8, 3)

            @tf.function
            def call(self, x, features):
                for i in range(len(self.blocks)):
                    block = self.blocks[i]
                    x = block(x)
                outputs = []
                for level in range(len(features)):
                    outputs.append(self.head(features[level]))
                return x, outputs
        """
    assert confidences(source) == {}


def test_a_helper_of_plain_python_arithmetic_adds_nothing_to_the_graph():
    source = """
        import tensorflow as tf

        def out_length(length, stride):
            return (length - 3) // stride + 1

        @tf.function
        def lengths(x):
            length = x.shape[1]
            for i in range(500):
                length = out_length(length, 2)
            return length
        """
    assert confidences(source) == {}


def test_a_helper_the_tf_function_calls_is_traced_with_it():
    source = """
        import tensorflow as tf

        cell = tf.keras.layers.GRUCell(256)

        def autoregress(state, steps=300):
            x = tf.zeros_like(state)
            for _ in reversed(range(steps)):
                x, [state] = cell(x, [state])
            return x

        @tf.function
        def generate(features):
            return autoregress(features)
        """
    found = findings(source)
    assert [(f.line, f.confidence) for f in found] == [(8, Confidence.HIGH)]
    assert "traced with the tf.function 'generate'" in found[0].message


def test_a_step_method_keras_traces_is_medium_confidence():
    # fit() traces train_step unless the model is compiled with run_eagerly=True
    source = """
        import tensorflow as tf

        class Accumulating(tf.keras.Model):
            def __init__(self, micro_batches=32):
                super().__init__()
                self.micro_batches = micro_batches
                self.body = tf.keras.layers.Dense(10)

            def train_step(self, data):
                x, y = data
                size = x.shape[0] // self.micro_batches
                for i in range(self.micro_batches):
                    with tf.GradientTape() as tape:
                        loss = self.compiled_loss(y[i * size:(i + 1) * size], self.body(x[i * size:(i + 1) * size]))
                    self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables), self.trainable_variables))
                return {"loss": loss}

        Accumulating()
        """
    found = findings(source)
    assert [(f.line, f.confidence) for f in found] == [(13, Confidence.MEDIUM)]
    assert "Keras traces 'train_step' in fit()" in found[0].message


def test_a_gradient_without_an_optimizer_step_is_not_a_training_loop():
    # an adversarial attack's tape: reported at the loop, not as a traced training loop
    source = """
        import tensorflow as tf

        classifier = tf.keras.Sequential([tf.keras.layers.Dense(10)])

        @tf.function
        def pgd(images, labels, steps=40):
            adv = images
            for _ in range(steps):
                with tf.GradientTape() as tape:
                    tape.watch(adv)
                    loss = tf.reduce_sum(classifier(adv))
                adv = adv + 0.01 * tf.sign(tape.gradient(loss, adv))
            return adv

        pgd(tf.zeros([8, 4]), tf.zeros([8]))
        """
    found = findings(source)
    assert [(f.line, f.confidence) for f in found] == [(9, Confidence.HIGH)]
    assert "training loop" not in found[0].message


def test_thousands_of_iterations_of_tensorflow_ops_alone_are_medium_confidence():
    source = DECODER.replace("STEPS", "10000").replace("x, [state] = cell(x, [state])", "x = tf.tanh(x @ state)")
    assert confidences(source) == {8: Confidence.MEDIUM}


def test_a_signature_dimension_gives_the_count_of_a_static_shape():
    source = """
        import tensorflow as tf

        norm = tf.keras.layers.LayerNormalization()

        @tf.function(input_signature=[tf.TensorSpec([None, 224, 224, CHANNELS])])
        def per_channel(images):
            outputs = []
            for c in range(images.shape[-1]):
                outputs.append(norm(images[..., c]))
            return tf.stack(outputs, -1)
        """
    assert confidences(source.replace("CHANNELS", "3")) == {}
    assert confidences(source.replace("CHANNELS", "64")) == {9: Confidence.HIGH}
    assert confidences(source.replace("CHANNELS", "None")) == {}


def test_a_keras_call_looping_over_a_static_shape_is_left_alone():
    # Keras's own RNN(unroll=True): fine for short sequences, and the file does not say how long
    source = """
        import keras
        from keras import layers, ops

        class CustomRNN(layers.Layer):
            def __init__(self, units=32):
                super().__init__()
                self.units = units
                self.projection = layers.Dense(units, activation="tanh")

            def call(self, inputs):
                state = ops.zeros((inputs.shape[0], self.units))
                for t in range(LENGTH):
                    state = self.projection(inputs[:, t, :]) + state
                return state

        CustomRNN()
        """
    assert confidences(source.replace("LENGTH", "inputs.shape[1]")) == {}
    assert confidences(source.replace("LENGTH", "500")) == {13: Confidence.MEDIUM}
