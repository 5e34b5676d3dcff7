"""Extra per-epoch work lives in a custom Callback: the model is called directly on a fixed probe batch and only floats are kept

Source: https://github.com/tensorflow/tensorflow/issues/38651
Style: keras-callback
Kind: negative: the model run from a callback at every epoch end (one direct call on a fixed tensor, not predict(); only Python floats stored)
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras


class CalibrationMonitor(keras.callbacks.Callback):
    """Expected calibration error of a fixed probe batch after each epoch."""

    def __init__(self, x_probe, y_probe, bins=15):
        super().__init__()
        self.x_probe = tf.convert_to_tensor(x_probe)
        self.y_probe = np.asarray(y_probe)
        self.bins = bins
        self.history = []

    def on_epoch_end(self, epoch, logs=None):
        probs = self.model(self.x_probe, training=False).numpy()
        conf, pred = probs.max(1), probs.argmax(1)
        edges = np.linspace(0, 1, self.bins + 1)
        ece = 0.0
        for lo, hi in zip(edges[:-1], edges[1:]):
            in_bin = (conf > lo) & (conf <= hi)
            if in_bin.any():
                ece += in_bin.mean() * abs((pred[in_bin] == self.y_probe[in_bin]).mean() - conf[in_bin].mean())
        self.history.append(float(ece))
        if logs is not None:
            logs["probe_ece"] = float(ece)


def main():
    (x_train, y_train), (x_test, y_test) = keras.datasets.cifar10.load_data()
    x_train, x_test = x_train.astype("float32") / 255, x_test.astype("float32") / 255
    model = keras.Sequential([
        keras.layers.Conv2D(32, 3, activation="relu", input_shape=(32, 32, 3)), keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, activation="relu"), keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(10, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    monitor = CalibrationMonitor(x_test[:1024], y_test[:1024, 0])
    model.fit(x_train, y_train, epochs=200, batch_size=128, callbacks=[monitor], verbose=2)
    print("final ECE", monitor.history[-1])


if __name__ == "__main__":
    main()
