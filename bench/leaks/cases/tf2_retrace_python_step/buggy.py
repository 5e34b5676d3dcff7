"""Language-model trainer passes the Python step counter into its @tf.function train_step for summary writing

Source: https://github.com/tensorflow/tensorflow/issues/31842
Style: tf2-loop
Kind: tf.function retraces every step: the Python int `step` (used for tf.summary) is part of the trace key, so CPU memory grows each step until OOM
"""
import numpy as np
import tensorflow as tf

VOCAB = 8000
SEQ = 128


class TinyLM(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.embed = tf.keras.layers.Embedding(VOCAB, 256)
        self.block = tf.keras.layers.LSTM(256, return_sequences=True)
        self.head = tf.keras.layers.Dense(VOCAB)
        self.optimizer_ = tf.keras.optimizers.Adam(3e-4)
        self.loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        self.summary_writer = tf.summary.create_file_writer("logs/train")

    def call(self, tokens, training=False):
        return self.head(self.block(self.embed(tokens)))

    @tf.function
    def fit_batch(self, tokens, global_step, clip=True, clip_limit=1.0):
        inputs, targets = tokens[:, :-1], tokens[:, 1:]
        with tf.GradientTape() as tape:
            loss = self.loss_fn(targets, self(inputs, training=True))
        gradients = tape.gradient(loss, self.trainable_variables)
        if clip:
            gradients = [tf.clip_by_value(g, -clip_limit, clip_limit) for g in gradients]
        self.optimizer_.apply_gradients(zip(gradients, self.trainable_variables))
        with self.summary_writer.as_default():
            tf.summary.scalar("loss", loss, step=global_step)
        return loss


def token_batches(rng, batch=16):
    while True:
        yield tf.constant(rng.integers(0, VOCAB, (batch, SEQ + 1)), dtype=tf.int32)


if __name__ == "__main__":
    model = TinyLM()
    data = token_batches(np.random.default_rng(0))
    for step in range(100_000):
        loss = model.fit_batch(next(data), step)  # leak: new:tf-function-retrace
        if step % 200 == 0:
            print(f"step {step}: loss {float(loss):.3f}")
