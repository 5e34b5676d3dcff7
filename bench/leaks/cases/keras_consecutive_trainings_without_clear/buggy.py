"""Consecutive trainings in one process: a CIFAR model is rebuilt and fitted per configuration; RAM keeps rising

Source: https://github.com/tensorflow/tensorflow/issues/37505
Style: keras-fit
Kind: Keras models built in a loop without clear_session (and without gc.collect): every configuration's model stays in Keras's global state
"""
import itertools

import numpy as np
import psutil
import tensorflow as tf


def build_model(filters, dropout):
    model = tf.keras.Sequential([  # leak: LL503
        tf.keras.layers.Conv2D(filters, 3, activation="relu", input_shape=(32, 32, 3)),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Conv2D(2 * filters, 3, activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dropout(dropout),
        tf.keras.layers.Dense(10, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def main():
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar10.load_data()
    x_train, x_test = x_train.astype("float32") / 255, x_test.astype("float32") / 255
    grid = list(itertools.product([16, 32, 64], [0.0, 0.25, 0.5], [64, 128]))
    results = {}
    for filters, dropout, batch_size in grid:
        model = build_model(filters, dropout)
        model.fit(x_train, y_train, batch_size=batch_size, epochs=5, verbose=0)
        _, acc = model.evaluate(x_test, y_test, verbose=0)
        results[(filters, dropout, batch_size)] = acc
        print(f"{filters} {dropout} {batch_size}: acc {acc:.4f}, "
              f"memory used: {psutil.Process().memory_info().rss / 2**20:.0f} MiB")
    best = max(results, key=results.get)
    print("best", best, results[best])


if __name__ == "__main__":
    np.random.seed(0)
    main()
