"""Architecture sweep builds every generated model variant three times in one process without clear_session

Source: https://github.com/keras-team/keras/issues/9345
Style: keras-fit
Kind: Keras models built in a loop without clear_session: layer names climb to input_156 and the 16 GB machine swaps as old models stay in Keras's global state
"""
import itertools
import json

import numpy as np
from tensorflow import keras

REPEATS = 3


def variant_specs():
    for depth, width, dropout in itertools.product((1, 2, 3), (32, 64, 128, 256), (0.0, 0.25, 0.5)):
        yield {"depth": depth, "width": width, "dropout": dropout}


def build_variant(spec, n_features, n_classes):
    keras.backend.clear_session()  # each variant starts from an empty Keras state
    inputs = keras.Input((n_features,))
    x = inputs
    for _ in range(spec["depth"]):
        x = keras.layers.Dense(spec["width"], activation="relu")(x)
        if spec["dropout"]:
            x = keras.layers.Dropout(spec["dropout"])(x)
    outputs = keras.layers.Dense(n_classes, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def evaluate_all(X_train, y_train, X_val, y_val):
    results = []
    for spec in variant_specs():
        accuracies = []
        for _ in range(REPEATS):
            model = build_variant(spec, X_train.shape[1], int(y_train.max()) + 1)
            model.fit(X_train, y_train, epochs=10, batch_size=128, verbose=0)
            accuracies.append(model.evaluate(X_val, y_val, verbose=0)[1])
        results.append({**spec, "accuracy": float(np.mean(accuracies)), "last_layer": model.layers[0].name})
        print(results[-1])
    return results


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12_000, 50)).astype(np.float32)
    y = rng.integers(0, 5, 12_000)
    summary = evaluate_all(X[:10_000], y[:10_000], X[10_000:], y[10_000:])
    with open("variants.json", "w") as handle:
        json.dump(summary, handle, indent=2)
