"""TF2 custom fit(): the whole epoch/batch loop is wrapped in one tf.function

Source: https://github.com/tensorflow/tensorflow/issues/48732
Style: tf2-loop
Kind: Python loops inside a tf.function are unrolled at trace time: the custom fit() decorated with @tf.function iterates over Python ranges of epochs and batches, so tracing builds one graph node set per batch of every epoch; tracing is slow and host memory grows linearly with the number of batches until the process is killed
"""
import numpy as np
import tensorflow as tf


def build_regressor(n_features, width=256):
    return tf.keras.Sequential([
        tf.keras.layers.Input((n_features,)),
        tf.keras.layers.Dense(width, activation="relu"),
        tf.keras.layers.Dense(width, activation="relu"),
        tf.keras.layers.Dense(width, activation="relu"),
        tf.keras.layers.Dense(1),
    ])


class TapeTrainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.optimizer = tf.keras.optimizers.Adam(lr)
        self.loss_fn = tf.keras.losses.MeanSquaredError()
        self.train_loss = tf.keras.metrics.Mean()

    @tf.function
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            pred = self.model(x, training=True)
            loss = self.loss_fn(y, pred)
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        self.train_loss.update_state(loss)
        return loss

    def fit(self, x, y, epochs, batch_size):
        dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size, drop_remainder=True)
        for epoch in range(epochs):
            self.train_loss.reset_state()
            for xb, yb in dataset:
                self.train_step(xb, yb)
            print(f"epoch {epoch} loss {float(self.train_loss.result()):.5f}")


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200_000, 64)).astype(np.float32)
    w = rng.normal(size=(64, 1)).astype(np.float32)
    y = (np.tanh(x @ w) + 0.05 * rng.normal(size=(200_000, 1))).astype(np.float32)
    trainer = TapeTrainer(build_regressor(64))
    trainer.fit(tf.constant(x), tf.constant(y), epochs=20, batch_size=256)
    trainer.model.save_weights("regressor.weights.h5")


if __name__ == "__main__":
    main()
