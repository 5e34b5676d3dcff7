"""A monitoring callback calls self.model.predict() on each probe sample, one at a time, at every epoch end

Source: https://github.com/rstudio/keras3/issues/1054
Style: keras-callback
Kind: Keras predict() per item inside Callback.on_epoch_end: each epoch adds dozens of predict() calls, and memory allocated per epoch keeps increasing
"""
import numpy as np
import tensorflow as tf


class ProbeDrift(tf.keras.callbacks.Callback):
    """Tracks how the predicted class of a few fixed probe inputs changes during training."""

    def __init__(self, probes):
        super().__init__()
        self.probes = probes
        self.history = []

    def on_epoch_end(self, epoch, logs=None):
        predicted = []
        for probe in self.probes:
            scores = self.model.predict(probe[None], verbose=0)  # leak: LL501
            predicted.append(int(np.argmax(scores[0])))
        self.history.append(predicted)
        changed = sum(a != b for a, b in zip(predicted, self.history[-2])) if len(self.history) > 1 else 0
        print(f"epoch {epoch}: {changed} probe predictions changed")


def build_model(n_features=5, n_classes=3):
    model = tf.keras.Sequential([
        tf.keras.Input((n_features,)),
        tf.keras.layers.Dense(4, activation="relu"),
        tf.keras.layers.Dense(n_classes, activation="softmax"),
    ])
    model.compile(optimizer="rmsprop", loss="categorical_crossentropy", metrics=["accuracy"])
    return model


def batches(rng, batch_size=7, n_features=5, n_classes=3):
    while True:
        x = tf.keras.utils.to_categorical(rng.integers(0, n_features, batch_size), n_features)
        y = tf.keras.utils.to_categorical(rng.integers(0, n_classes, batch_size), n_classes)
        yield x.astype(np.float32), y.astype(np.float32)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    probes = np.eye(5, dtype=np.float32).repeat(10, axis=0)
    model = build_model()
    model.fit(batches(rng), steps_per_epoch=50, epochs=2000, verbose=0, callbacks=[ProbeDrift(probes)],
              validation_data=batches(rng), validation_steps=5)
