"""Physics-informed fit that needs two gradients per step from one persistent tape, and deletes the tape each step

Source: https://github.com/sql-machine-learning/elasticdl/issues/1144
Style: tf2-loop
Kind: negative: resembles a persistent GradientTape kept across steps; the tape is local to the step and released with `del tape` after its last use
"""
import numpy as np
import tensorflow as tf


def build_solution_net():
    return tf.keras.Sequential([
        tf.keras.Input((2,)),
        tf.keras.layers.Dense(64, activation="tanh"),
        tf.keras.layers.Dense(64, activation="tanh"),
        tf.keras.layers.Dense(1),
    ])


def train(steps=20_000, n_points=2048):
    rng = np.random.default_rng(0)
    net = build_solution_net()
    optimizer = tf.keras.optimizers.Adam(1e-3)
    for step in range(steps):
        xt = tf.constant(rng.uniform(-1, 1, (n_points, 2)), dtype=tf.float32)
        with tf.GradientTape() as outer:
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(xt)
                u = net(xt)
            du = tape.gradient(u, xt)  # first use of the persistent tape
            u_x, u_t = du[:, 0:1], du[:, 1:2]
            u_xx = tape.gradient(u_x, xt)[:, 0:1]  # second use
            del tape  # released here, inside the step
            residual = u_t + u * u_x - 0.01 / np.pi * u_xx
            boundary = net(tf.constant([[-1.0, 0.0], [1.0, 0.0]]))
            loss = tf.reduce_mean(residual ** 2) + tf.reduce_mean(boundary ** 2)
        grads = outer.gradient(loss, net.trainable_variables)
        optimizer.apply_gradients(zip(grads, net.trainable_variables))
        if step % 1000 == 0:
            print(f"step {step}: residual loss {float(loss):.5f}")
    return net


if __name__ == "__main__":
    train().save_weights("burgers_pinn.weights.h5")
