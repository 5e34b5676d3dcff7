"""Pricing service whose @tf.function has an input_signature with an unknown dimension, called with any number of strikes

Source: https://github.com/google/tf-quant-finance/issues/68
Style: tf2-loop
Kind: negative: resembles tf.function retracing on changing input shapes; the None dimension in the input_signature gives one trace for every length
"""
import numpy as np
import tensorflow as tf

DTYPE = tf.float64
N_PATHS = 10_000


@tf.function(input_signature=[
    tf.TensorSpec([None], DTYPE),
    tf.TensorSpec([], DTYPE),
    tf.TensorSpec([], DTYPE),
    tf.TensorSpec([], DTYPE),
])
def put_prices(strikes, spot, volatility, expiry):
    normals = tf.random.stateless_normal([N_PATHS], seed=[7, 11], dtype=DTYPE)
    terminal = spot * tf.exp((-0.5 * volatility ** 2) * expiry + volatility * tf.sqrt(expiry) * normals)
    return tf.reduce_mean(tf.nn.relu(strikes[None, :] - terminal[:, None]), axis=0)


def quote_stream(rng):
    while True:
        n_strikes = int(rng.integers(1, 3000))
        spot = float(rng.uniform(50, 150))
        yield np.sort(spot * rng.uniform(0.5, 1.5, n_strikes)), spot, float(rng.uniform(0.1, 0.6)), float(rng.uniform(0.1, 2.0))


def serve(n_requests=100_000):
    rng = np.random.default_rng(0)
    for index, (strikes, spot, vol, expiry) in zip(range(n_requests), quote_stream(rng)):
        prices = put_prices(
            tf.constant(strikes, DTYPE), tf.constant(spot, DTYPE), tf.constant(vol, DTYPE), tf.constant(expiry, DTYPE)
        )
        if index % 5000 == 0:
            traces = put_prices.experimental_get_tracing_count()
            print(f"request {index}: {len(strikes)} strikes, mean price {float(tf.reduce_mean(prices)):.3f}, traces {traces}")


if __name__ == "__main__":
    serve()
