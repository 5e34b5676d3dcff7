"""Training many small TF2 regressors in a loop (one per seed): the training method of the model class is a `tf.function`

Source: https://github.com/tensorflow/tensorflow/issues/62854
Style: tf2-loop
Kind: a tf.function per model: the `@tf.function` on the class's `train` method makes a new Function (and new traced graphs) for every instance built in the loop; RAM grows after each iteration even with `del model`, `gc.collect()` and `clear_session()`, and stays flat once the decorator is removed
"""
import gc
import os

import numpy as np
import psutil
import tensorflow as tf


class SeedRegressor:
    def __init__(self, width=256):
        self.dnn = tf.keras.Sequential([
            tf.keras.layers.Dense(width, activation="relu"),
            tf.keras.layers.Dense(width, activation="relu"),
            tf.keras.layers.Dense(width, activation="relu"),
            tf.keras.layers.Dense(1),
        ])
        self.optimizer = tf.keras.optimizers.Adam(1e-3)

    @tf.function  # leak: LL502
    def train(self, dataset, epochs):
        for _ in tf.range(epochs):
            for x, y in dataset:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(self.dnn(x, training=True) - y))
                grads = tape.gradient(loss, self.dnn.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.dnn.trainable_variables))
        return loss

    def evaluate(self, x, y):
        pred = self.dnn(x, training=False)
        return float(tf.reduce_mean(tf.square(pred - y)))


def make_data(seed, n=4096, d=32):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)).astype(np.float32)
    w = rng.normal(size=(d, 1)).astype(np.float32)
    y = (x @ w + 0.1 * rng.normal(size=(n, 1))).astype(np.float32)
    return x, y


def main(n_runs=200):
    process = psutil.Process(os.getpid())
    scores = []
    for seed in range(n_runs):
        tf.random.set_seed(seed)
        x, y = make_data(seed)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(4096, seed=seed).batch(128, drop_remainder=True)
        model = SeedRegressor()
        model.train(ds, tf.constant(5))
        scores.append(model.evaluate(x, y))
        del model
        gc.collect()
        tf.keras.backend.clear_session()
        print(f"run {seed}: mse {scores[-1]:.4f} rss {process.memory_info().rss / 2**20:.0f} MiB")
    print("mean mse", np.mean(scores))


if __name__ == "__main__":
    main()
