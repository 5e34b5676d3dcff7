"""Monte-Carlo option pricer is a @tf.function called with strike vectors of a different length on each request

Source: https://github.com/google/tf-quant-finance/issues/68
Style: tf2-loop
Kind: tf.function retraces on every new input shape: without an input_signature each strike-vector length is a new trace, kept forever
"""
import numpy as np
import tensorflow as tf

NUM_PATHS = 20_000
NUM_STEPS = 50
DTYPE = tf.float64


@tf.function  # leak: new:tf-function-retrace
def call_prices(strike_vector, s0, vol):
    """European call prices under geometric Brownian motion, one price per strike."""
    dt = 1.0 / NUM_STEPS
    normals = tf.random.stateless_normal([NUM_PATHS, NUM_STEPS], seed=[1, 2], dtype=DTYPE)
    log_paths = tf.cumsum((-0.5 * vol ** 2) * dt + vol * tf.sqrt(dt) * normals, axis=1)
    terminal = s0 * tf.exp(log_paths[:, -1])
    payoffs = tf.nn.relu(terminal[:, None] - strike_vector[None, :])
    return tf.reduce_mean(payoffs, axis=0)


def incoming_requests(rng, spot):
    """A pricing service: each request carries however many strikes the client asked for."""
    while True:
        n = int(rng.integers(1, 5000))
        yield tf.constant(spot * rng.uniform(0.8, 1.6, n), dtype=DTYPE)


if __name__ == "__main__":
    spot = tf.constant(100.0, dtype=DTYPE)
    sigma = tf.constant(0.2, dtype=DTYPE)
    requests = incoming_requests(np.random.default_rng(0), 100.0)
    for i in range(100_000):
        prices = call_prices(next(requests), spot, sigma)
        if i % 1000 == 0:
            print(i, prices.shape, float(tf.reduce_mean(prices)))
