"""Architecture comparison that calls clear_session() at the top of each iteration, before building the next model

Source: https://tensorflow.org/api_docs/python/tf/keras/backend/clear_session
Style: keras-fit
Kind: negative: resembles Keras models built in a loop without clear_session (LL503); the session is cleared every iteration
"""
import json

import numpy as np
import tensorflow as tf

ARCHITECTURES = {
    "shallow": [64],
    "medium": [128, 64],
    "deep": [256, 128, 64, 32],
    "wide": [1024],
}


def build(hidden_units, n_features, n_classes):
    inputs = tf.keras.Input((n_features,))
    x = inputs
    for units in hidden_units:
        x = tf.keras.layers.Dense(units, activation="relu")(x)
    outputs = tf.keras.layers.Dense(n_classes, activation="softmax")(x)
    model = tf.keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def compare(x_train, y_train, x_val, y_val, seeds=(0, 1, 2)):
    scores = {}
    for name, units in ARCHITECTURES.items():
        accuracies = []
        for seed in seeds:
            tf.keras.backend.clear_session()
            tf.keras.utils.set_random_seed(seed)
            model = build(units, x_train.shape[1], n_classes=10)
            model.fit(x_train, y_train, epochs=15, batch_size=256, verbose=0)
            accuracies.append(model.evaluate(x_val, y_val, verbose=0)[1])
        scores[name] = float(np.mean(accuracies))
        print(name, scores[name])
    return scores


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x = rng.standard_normal((30_000, 64)).astype(np.float32)
    y = rng.integers(0, 10, 30_000)
    result = compare(x[:25_000], y[:25_000], x[25_000:], y[25_000:])
    with open("architecture_scores.json", "w") as handle:
        json.dump(result, handle, indent=2)
