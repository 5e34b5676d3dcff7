"""Text-generation service builds the whole sampling sub-graph inside generate(), once per request

Source: https://github.com/minimaxir/gpt-2-simple/issues/71
Style: tf1-session
Kind: graph grows per request: the sampling loop (a tf.while_loop with the model inside) is added to the session graph on every generate() call
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

VOCAB = 5000
EMBED = 256


def language_model(tokens, reuse):
    with tf.variable_scope("model", reuse=reuse):
        table = tf.get_variable("wte", [VOCAB, EMBED])
        hidden = tf.reduce_mean(tf.nn.embedding_lookup(table, tokens), axis=1)
        return tf.matmul(hidden, table, transpose_b=True)


def build_sampler(context, length, temperature):
    def step(i, tokens):
        logits = language_model(tokens, reuse=True) / temperature
        next_token = tf.random.categorical(logits, 1, dtype=tf.int32)
        return i + 1, tf.concat([tokens, next_token], axis=1)

    _, tokens = tf.while_loop(
        lambda i, _: i < length, step, [tf.constant(0), context],
        shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, None])],
    )
    return tokens


class Generator:
    def __init__(self):
        self.sess = tf.Session()
        self.context = tf.placeholder(tf.int32, [1, None])
        self.length = tf.placeholder(tf.int32, [])
        self.temperature = tf.placeholder(tf.float32, [])
        language_model(self.context, reuse=False)
        with tf.name_scope("sampler"):
            self.output = build_sampler(self.context, self.length, self.temperature)
        self.sess.run(tf.global_variables_initializer())
        self.sess.graph.finalize()

    def generate(self, prompt_ids, length=64, temperature=0.8):
        feed = {self.context: [prompt_ids], self.length: length, self.temperature: temperature}
        return self.sess.run(self.output, feed_dict=feed)[0]


if __name__ == "__main__":
    generator = Generator()
    rng = np.random.default_rng(9)
    for request in range(10_000):
        prompt = rng.integers(0, VOCAB, size=12).tolist()
        text_ids = generator.generate(prompt)
        if request % 100 == 0:
            print(request, len(text_ids), len(generator.sess.graph.get_operations()))
