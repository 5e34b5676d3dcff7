"""Keras grid search in a notebook: a new Sequential model is built and fit for every configuration in one process

Source: https://github.com/keras-team/keras/issues/3579
Style: keras-fit
Kind: Keras models built in a loop without clear_session: every configuration of the parameter sweep adds a new model's layers and ops to the backend's global graph/session, so each fit gets slower (3 min to 6 min over 40 configurations) and memory keeps climbing
"""
import itertools
import json

import numpy as np
from tensorflow import keras

GRID = {
    "units": [64, 128, 256],
    "dropout": [0.0, 0.25, 0.5],
    "lr": [1e-3, 3e-4],
    "depth": [2, 3],
}


def build_model(n_features, n_classes, units, dropout, lr, depth):
    model = keras.Sequential()
    model.add(keras.layers.InputLayer(input_shape=(n_features,)))
    for _ in range(depth):
        model.add(keras.layers.Dense(units, activation="relu"))
        model.add(keras.layers.BatchNormalization())
        model.add(keras.layers.Dropout(dropout))
    model.add(keras.layers.Dense(n_classes, activation="softmax"))
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=lr),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def search(x_train, y_train, x_val, y_val, epochs=30, batch_size=128):
    n_features, n_classes = x_train.shape[1], int(y_train.max()) + 1
    keys = sorted(GRID)
    results = []
    for values in itertools.product(*(GRID[k] for k in keys)):
        cfg = dict(zip(keys, values))
        keras.backend.clear_session()
        model = build_model(n_features, n_classes, **cfg)
        history = model.fit(x_train, y_train, validation_data=(x_val, y_val), epochs=epochs,
                            batch_size=batch_size, verbose=0,
                            callbacks=[keras.callbacks.EarlyStopping(patience=5, restore_best_weights=True)])
        val_loss, val_acc = model.evaluate(x_val, y_val, verbose=0)
        results.append({**cfg, "val_loss": float(val_loss), "val_acc": float(val_acc),
                        "epochs_run": len(history.history["loss"])})
        print(cfg, f"val_acc={val_acc:.4f}")
    results.sort(key=lambda r: -r["val_acc"])
    with open("grid_results.json", "w") as f:
        json.dump(results, f, indent=2)
    return results[0]


if __name__ == "__main__":
    data = np.load("tabular_split.npz")
    best = search(data["x_train"], data["y_train"], data["x_val"], data["y_val"])
    print("best:", best)
