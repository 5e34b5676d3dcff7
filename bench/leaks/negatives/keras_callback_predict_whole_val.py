"""Callback predicts the whole validation array once per epoch and keeps only one number from it

Source: https://github.com/keras-team/keras/issues/4168
Style: keras-callback
Kind: negative: resembles predict() in a loop (LL501) and callbacks retaining per-epoch outputs; one predict per epoch on a fixed array, and only a float is stored
"""
import numpy as np
import tensorflow as tf


class MacroF1(tf.keras.callbacks.Callback):
    def __init__(self, x_val, y_val, n_classes):
        super().__init__()
        self.x_val = x_val
        self.y_val = y_val
        self.n_classes = n_classes
        self.scores = []

    def on_epoch_end(self, epoch, logs=None):
        predicted = self.model.predict(self.x_val, batch_size=2048, verbose=0).argmax(axis=1)
        f1s = []
        for cls in range(self.n_classes):
            tp = np.sum((predicted == cls) & (self.y_val == cls))
            fp = np.sum((predicted == cls) & (self.y_val != cls))
            fn = np.sum((predicted != cls) & (self.y_val == cls))
            f1s.append(2 * tp / max(1, 2 * tp + fp + fn))
        self.scores.append(float(np.mean(f1s)))
        if logs is not None:
            logs["val_macro_f1"] = self.scores[-1]


def build(n_features, n_classes):
    model = tf.keras.Sequential([tf.keras.Input((n_features,)), tf.keras.layers.Dense(128, activation="relu"),
                                 tf.keras.layers.Dense(n_classes, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x = rng.standard_normal((60_000, 20)).astype(np.float32)
    y = np.digitize(x[:, 0] + x[:, 1], [-1.0, 0.0, 1.0])
    f1 = MacroF1(x[50_000:], y[50_000:], n_classes=4)
    build(20, 4).fit(x[:50_000], y[:50_000], epochs=100, batch_size=512, verbose=0, callbacks=[f1])
    print("best macro F1:", max(f1.scores))
