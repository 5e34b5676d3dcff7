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
    def on_epoch_begin(self, epoch, logs=None):
        self.selected = {"e": 0, "mu": 0, "jet": 0}  # only running counts survive a batch

    def on_train_batch_end(self, batch, logs=None):
        y, pred = self.model.last_y.numpy(), self.model.last_pred.numpy()
        for name, index in (("e", 0), ("mu", 1), ("jet", 3)):
            ratio = pred[:, TAU] / (pred[:, TAU] + pred[:, index])
            score = np.where(y[:, index] == 1.0, ratio, -1.0)
            self.selected[name] += int((score > 0.5).sum())

    def on_epoch_end(self, epoch, logs=None):
        print(f"epoch {epoch}: {self.selected}")


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
