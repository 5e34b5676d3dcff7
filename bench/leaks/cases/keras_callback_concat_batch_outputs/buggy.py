"""Callback collects per-batch scores by tf.concat-ing device tensors onto a growing attribute every batch

Source: https://github.com/cms-tau-pog/TauMLTools/pull/109
Style: keras-callback
Kind: device tensors accumulated across batches (family device-accumulation): each batch re-concatenates the whole history on the accelerator, and nothing is cleared between epochs
"""
import numpy as np
import tensorflow as tf

N_CLASSES = 4  # e, mu, tau, jet
TAU = 2


class TauIdModel(tf.keras.Model):
    """Keeps the last batch's labels and scores so callbacks can inspect them (requires run_eagerly)."""

    def train_step(self, data):
        x, y, weight = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, sample_weight=weight)
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables), self.trainable_variables))
        self.last_y, self.last_pred, self.last_weight = y, y_pred, weight
        return {"loss": loss}


class DiscriminatorScores(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.scores = {}

    def on_train_batch_end(self, batch, logs=None):
        y, pred = self.model.last_y, self.model.last_pred
        for name, index in (("e", 0), ("mu", 1), ("jet", 3)):
            ratio = pred[:, TAU] / (pred[:, TAU] + pred[:, index])
            score = tf.where(y[:, index] == 1.0, ratio, -1.0)
            previous = self.scores.get(name)
            self.scores[name] = score if previous is None else tf.concat([previous, score], axis=0)  # leak: new:device-accumulation

    def on_epoch_end(self, epoch, logs=None):
        selected = {name: int(tf.reduce_sum(tf.cast(s > 0.5, tf.int32))) for name, s in self.scores.items()}
        print(f"epoch {epoch}: {selected}")


def build(n_features=47):
    inputs = tf.keras.Input((n_features,))
    hidden = tf.keras.layers.Dense(256, activation="relu")(inputs)
    model = TauIdModel(inputs, tf.keras.layers.Dense(N_CLASSES, activation="softmax")(hidden))
    model.compile(optimizer="adam", loss="categorical_crossentropy", run_eagerly=True)
    return model


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200_000, 47)).astype(np.float32)
    y = tf.keras.utils.to_categorical(rng.integers(0, N_CLASSES, len(x)), N_CLASSES)
    w = np.ones(len(x), dtype=np.float32)
    build().fit(x, y, sample_weight=w, batch_size=500, epochs=50, callbacks=[DiscriminatorScores()], verbose=0)
