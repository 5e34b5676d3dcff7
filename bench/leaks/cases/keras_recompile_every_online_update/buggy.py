"""An online learner re-compiles its Keras model before every small fit(); each fit gets slower and memory climbs

Source: https://github.com/tensorflow/tensorflow/issues/25073
Style: keras-fit
Kind: the same Keras model compiled again on every update of a long loop: every compile() makes a new optimizer and training function, and fit() time and memory keep growing (constant once the compile moves out of the loop)
"""
import time

import numpy as np
import tensorflow as tf

N_FEATURES = 10
N_CLASSES = 10


def build_classifier():
    init = tf.keras.initializers.TruncatedNormal(mean=0.0, stddev=0.05, seed=1)
    return tf.keras.Sequential([
        tf.keras.Input((N_FEATURES,)),
        tf.keras.layers.Dense(25, kernel_initializer=init, activation="relu"),
        tf.keras.layers.Dense(N_CLASSES, kernel_initializer=init, activation="softmax"),
    ])


def next_observation(rng):
    """One new labelled pattern, as an online learner receives them."""
    x = rng.integers(0, 2, size=(1, N_FEATURES)).astype("float32")
    y = np.zeros((1, N_CLASSES), dtype="float32")
    y[0, int(x.sum()) % N_CLASSES] = 1.0
    return x, y


def main(updates=20_000, lr=0.01):
    rng = np.random.default_rng(0)
    model = build_classifier()
    started = time.perf_counter()
    for step in range(updates):
        x, y = next_observation(rng)
        model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=lr), loss="categorical_crossentropy")  # leak: LL503
        model.fit(x, y, epochs=1, verbose=0)
        if step % 500 == 0:
            elapsed, started = time.perf_counter() - started, time.perf_counter()
            print(f"update {step}: {elapsed:.2f}s for the last 500 fits")


if __name__ == "__main__":
    main()
