"""Custom training loop whose @tf.function step is defined once, outside the epoch and batch loops

Source: https://TensorFlow.org/api_docs/python/tf/function
Style: tf2-loop
Kind: negative: resembles a tf.function created in a loop (LL502); here one Function is built before the loops and reused
"""
import numpy as np
import tensorflow as tf

EPOCHS = 40
BATCH = 128


def build_model(n_features=30):
    return tf.keras.Sequential([
        tf.keras.Input((n_features,)),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(1),
    ])


def make_train_step(model, optimizer):
    """Called once by fit(); the Function it returns is what the loop calls every batch."""

    @tf.function
    def train_step(features, targets):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.keras.losses.huber(targets, model(features, training=True)))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return train_step


@tf.function
def evaluate_batch(model, features, targets):
    return tf.reduce_mean(tf.abs(targets - model(features, training=False)))


def fit(model, train_ds, val_ds):
    train_step = make_train_step(model, tf.keras.optimizers.Adam(1e-3))
    for epoch in range(EPOCHS):
        losses = [float(train_step(x, y)) for x, y in train_ds]
        val_mae = np.mean([float(evaluate_batch(model, x, y)) for x, y in val_ds])
        print(f"epoch {epoch}: train {np.mean(losses):.4f} val_mae {val_mae:.4f}")


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x = rng.standard_normal((20_000, 30)).astype(np.float32)
    y = (x @ rng.standard_normal((30, 1))).astype(np.float32)
    train = tf.data.Dataset.from_tensor_slices((x[:16_000], y[:16_000])).shuffle(16_000).batch(BATCH, drop_remainder=True)
    val = tf.data.Dataset.from_tensor_slices((x[16_000:], y[16_000:])).batch(BATCH, drop_remainder=True)
    fit(build_model(), train, val)
