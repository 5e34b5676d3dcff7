"""TF2 custom training loop: only the per-batch step is a tf.function; epochs and batches are iterated in Python

Source: https://www.tensorflow.org/guide/keras/writing_a_training_loop_from_scratch
Source: https://github.com/tensorflow/tensorflow/issues/48732
Style: tf2-loop
Kind: negative: resembles a training loop inside a tf.function that unrolls into a huge graph; here only `train_step` is compiled, it is traced once (fixed batch shape from drop_remainder) and called from plain Python loops over epochs and a tf.data dataset, and metrics are reset every epoch
"""
import numpy as np
import tensorflow as tf


def build_regressor(n_features, width=256):
    return tf.keras.Sequential([
        tf.keras.layers.Input((n_features,)),
        tf.keras.layers.Dense(width, activation="relu"),
        tf.keras.layers.Dense(width, activation="relu"),
        tf.keras.layers.Dense(1),
    ])


model = build_regressor(64)
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.MeanSquaredError()
train_loss = tf.keras.metrics.Mean()
val_loss = tf.keras.metrics.Mean()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    train_loss.update_state(loss)


@tf.function
def val_step(x, y):
    val_loss.update_state(loss_fn(y, model(x, training=False)))


def main(epochs=20, batch_size=256):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(220_000, 64)).astype(np.float32)
    y = np.tanh(x @ rng.normal(size=(64, 1))).astype(np.float32)
    train_ds = tf.data.Dataset.from_tensor_slices((x[:200_000], y[:200_000])).shuffle(10_000)
    train_ds = train_ds.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)
    val_ds = tf.data.Dataset.from_tensor_slices((x[200_000:], y[200_000:])).batch(batch_size, drop_remainder=True)
    for epoch in range(epochs):
        train_loss.reset_state()
        val_loss.reset_state()
        for xb, yb in train_ds:
            train_step(xb, yb)
        for xb, yb in val_ds:
            val_step(xb, yb)
        print(f"epoch {epoch}: train {float(train_loss.result()):.5f} val {float(val_loss.result()):.5f}")
    model.save_weights("regressor.weights.h5")


if __name__ == "__main__":
    main()
