"""A tf.function activation is called with a Python float threshold that is annealed every step

Source: https://github.com/tensorflow/addons/issues/807
Style: tf2-loop
Kind: tf.function retraces on Python arguments: each new float value of lower/upper is a new trace signature, and every trace is kept ("N out of the last N calls triggered tf.function retracing")
"""
import numpy as np
import tensorflow as tf


@tf.function
def softshrink(x, lower=-0.5, upper=0.5):
    values_below_lower = tf.where(x < lower, x - lower, 0)
    values_above_upper = tf.where(upper < x, x - upper, 0)
    return values_below_lower + values_above_upper


class SparseCodingNet(tf.keras.Model):
    """Unrolled ISTA: each layer applies softshrink with the current sparsity threshold."""

    def __init__(self, code_dim=256, steps=5):
        super().__init__()
        self.encode = tf.keras.layers.Dense(code_dim)
        self.mix = [tf.keras.layers.Dense(code_dim, use_bias=False) for _ in range(steps)]
        self.decode = tf.keras.layers.Dense(784)

    def call(self, x, threshold):
        b = self.encode(x)
        threshold = tf.convert_to_tensor(threshold, dtype=b.dtype)
        z = softshrink(b, lower=-threshold, upper=threshold)
        for layer in self.mix:
            z = softshrink(b + layer(z), lower=-threshold, upper=threshold)
        return self.decode(z), z


def main(steps=30_000):
    (x_train, _), _ = tf.keras.datasets.mnist.load_data()
    data = tf.data.Dataset.from_tensor_slices(x_train.reshape(-1, 784).astype("float32") / 255).shuffle(60000).batch(128).repeat()
    model = SparseCodingNet()
    optimizer = tf.keras.optimizers.Adam(1e-3)
    for step, x in enumerate(data.take(steps)):
        threshold = float(0.5 * np.exp(-step / 5000) + 0.05)
        with tf.GradientTape() as tape:
            recon, code = model(x, threshold)
            loss = tf.reduce_mean((recon - x) ** 2) + 1e-3 * tf.reduce_mean(tf.abs(code))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        if step % 1000 == 0:
            print(step, float(loss), threshold)


if __name__ == "__main__":
    main()
