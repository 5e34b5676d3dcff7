"""Worker hands a persistent GradientTape to its embedding layer, which keeps it until the next step

Source: https://github.com/sql-machine-learning/elasticdl/issues/1144
Style: tf2-loop
Kind: persistent GradientTape kept across steps (family persistent-tape): a persistent tape is never released by gradient(); stored on the layer and not deleted, it keeps every recorded activation of the step alive
"""
import numpy as np
import tensorflow as tf


class SparseEmbedding(tf.keras.layers.Layer):
    """Looks up rows of a large table; the training loop asks for the looked-up rows' gradients."""

    def __init__(self, vocab, dim):
        super().__init__()
        self.table = self.add_weight(name="table", shape=(vocab, dim), initializer="uniform")

    def call(self, ids):
        return tf.nn.embedding_lookup(self.table, ids)


class CTRModel(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.embedding = SparseEmbedding(vocab=200_000, dim=16)
        self.dense = tf.keras.layers.Dense(64, activation="relu")
        self.out = tf.keras.layers.Dense(1)

    def call(self, ids):
        rows = self.embedding(ids)
        return self.out(self.dense(tf.reduce_sum(rows, axis=1))), rows


def train(model, batches, lr=0.05):
    optimizer = tf.keras.optimizers.SGD(lr)
    loss_fn = tf.keras.losses.BinaryCrossentropy(from_logits=True)
    for step, (ids, labels) in enumerate(batches):
        with tf.GradientTape() as tape:  # non-persistent: released by the single gradient() call
            logits, rows = model(ids)
            tape.watch(rows)
            loss = loss_fn(labels, logits)
        dense_vars = model.dense.trainable_variables + model.out.trainable_variables
        *dense_grads, row_grads = tape.gradient(loss, dense_vars + [rows])
        optimizer.apply_gradients(zip(dense_grads, dense_vars))
        model.embedding.table.scatter_sub(tf.IndexedSlices(lr * tf.reshape(row_grads, [-1, 16]), tf.reshape(ids, [-1])))
        if step % 500 == 0:
            print(f"step {step}: loss {float(loss):.4f}")


def click_logs(rng, n_batches=100_000, batch=512, fields=26):
    for _ in range(n_batches):
        yield rng.integers(0, 200_000, (batch, fields)), rng.integers(0, 2, (batch, 1)).astype(np.float32)


if __name__ == "__main__":
    train(CTRModel(), click_logs(np.random.default_rng(0)))
