"""A @tf.function epoch loop takes the model's step as an argument; `model.step` is a new bound method each access

Source: https://github.com/tensorflow/tensorflow/issues/31175
Style: tf2-loop
Kind: tf.function retraces every call: a bound-method argument never matches the cached trace (model.step is not model.step), so the whole epoch loop is re-traced and kept each epoch
"""
import numpy as np
import tensorflow as tf


class Regressor(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(64, activation="relu")
        self.out = tf.keras.layers.Dense(1)
        self.optimizer_ = tf.keras.optimizers.SGD(0.01)

    def call(self, x):
        return self.out(self.hidden(x))

    def step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self(x) - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer_.apply_gradients(zip(grads, self.trainable_variables))
        return loss


def make_train_epoch(model):
    """The model is closed over, so the Function's only argument is the dataset."""

    @tf.function
    def train_epoch(dataset):
        total = tf.constant(0.0)
        for x, y in dataset:
            total += model.step(x, y)
        return total

    return train_epoch


def main(epochs=2000):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4096, 8)).astype(np.float32)
    y = (x.sum(axis=1, keepdims=True) + 0.1 * rng.standard_normal((4096, 1))).astype(np.float32)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(128)
    model = Regressor()
    train_epoch = make_train_epoch(model)
    for epoch in range(epochs):
        total = train_epoch(dataset)
        if epoch % 100 == 0:
            print(f"epoch {epoch}: summed loss {float(total):.3f}")


if __name__ == "__main__":
    main()
