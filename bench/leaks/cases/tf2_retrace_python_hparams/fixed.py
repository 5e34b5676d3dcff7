"""Switching-dynamics trainer anneals temperature and learning rate as Python floats passed to a @tf.function step

Source: https://github.com/yerkojahve/Meta-Pseudo-label/issues/1
Style: tf2-loop
Kind: tf.function retraces on Python scalars: learning_rate, temperature and the cross-entropy coefficient change every step, so every step builds and keeps a new graph
"""
import numpy as np
import tensorflow as tf

NUM_STEPS = 20_000


def make_model(latent=3, hidden=64):
    return tf.keras.Sequential([
        tf.keras.layers.LSTM(hidden, return_sequences=True, input_shape=(None, latent)),
        tf.keras.layers.Dense(latent),
    ])


def schedule(step, start, end, decay_steps):
    frac = min(1.0, step / decay_steps)
    return start + (end - start) * frac


model = make_model()
optimizer = tf.keras.optimizers.Adam(learning_rate=tf.Variable(1e-3))


@tf.function
def train_step(batch, lr, tau, entropy_weight):
    optimizer.learning_rate.assign(lr)
    with tf.GradientTape() as tape:
        prediction = model(batch[:, :-1], training=True)
        recon = tf.reduce_mean(tf.square(prediction - batch[:, 1:]))
        switching = tf.nn.softmax(prediction / tau, axis=-1)
        entropy = -tf.reduce_mean(tf.reduce_sum(switching * tf.math.log(switching + 1e-8), axis=-1))
        loss = recon + entropy_weight * entropy
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def lorenz_batches(rng, batch=32, length=200):
    while True:
        yield tf.constant(rng.standard_normal((batch, length, 3)).astype(np.float32))


def as_scalar(value):
    """Scalars go in as float32 tensors: one trace serves every value."""
    return tf.constant(value, dtype=tf.float32)


if __name__ == "__main__":
    data = lorenz_batches(np.random.default_rng(0))
    step = 0
    while step < NUM_STEPS:
        lr = schedule(step, 1e-3, 1e-5, NUM_STEPS)
        temperature = schedule(step, 1e3, 1.0, NUM_STEPS // 2)
        entropy_w = schedule(step, 1e3, 0.0, NUM_STEPS // 4)
        loss = train_step(next(data), as_scalar(lr), as_scalar(temperature), as_scalar(entropy_w))
        if step % 500 == 0:
            print(f"step {step}: loss {float(loss):.4f} temperature {temperature:.1f}")
        step += 1
