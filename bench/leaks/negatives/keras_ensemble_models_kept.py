"""Snapshot ensemble: five Keras models are trained in a loop and all kept for averaging, with no clear_session()

Source: https://github.com/tensorflow/tensorflow/issues/30324
Style: keras-fit
Kind: negative: resembles Keras models built in a loop without clear_session (LL503); the models are kept on purpose, and clearing the session would break the ones already trained
"""
import numpy as np
import tensorflow as tf

N_MEMBERS = 5


def member(seed, n_features, n_classes):
    tf.keras.utils.set_random_seed(seed)
    model = tf.keras.Sequential([
        tf.keras.Input((n_features,)),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dropout(0.3),
        tf.keras.layers.Dense(n_classes, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train_ensemble(x, y, n_classes):
    members = []
    for seed in range(N_MEMBERS):
        model = member(seed, x.shape[1], n_classes)
        bootstrap = np.random.default_rng(seed).integers(0, len(x), len(x))
        model.fit(x[bootstrap], y[bootstrap], epochs=10, batch_size=256, verbose=0)
        members.append(model)
    return members


def ensemble_predict(members, x):
    return np.mean([m.predict(x, batch_size=2048, verbose=0) for m in members], axis=0)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40_000, 32)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0).astype(np.int64)
    members = train_ensemble(x[:30_000], y[:30_000], n_classes=3)
    probs = ensemble_predict(members, x[30_000:])
    print("ensemble accuracy:", float((probs.argmax(1) == y[30_000:]).mean()))
