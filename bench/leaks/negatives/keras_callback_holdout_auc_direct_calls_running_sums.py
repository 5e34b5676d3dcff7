"""Keras callback that scores a second hold-out set at every epoch end with direct model calls and running numpy totals

Source: https://www.tensorflow.org/api_docs/python/tf/keras/Model#predict
Source: https://www.tensorflow.org/guide/keras/writing_your_own_callbacks
Style: keras-callback
Kind: negative: resembles predict() run batch by batch inside a loop (LL501), a callback keeping model outputs on itself (LL507), a tf.data pipeline rebuilt every epoch and a summary writer made per call; the hold-out dataset is built once in __init__, each batch goes through `self.model(x, training=False)` as the predict() documentation recommends for loops, only per-bin histogram counts (fixed-size numpy arrays) and floats are kept, and the writer is opened in on_train_begin and closed in on_train_end
"""
import numpy as np
import tensorflow as tf

N_BINS = 200


class HoldoutAUC(tf.keras.callbacks.Callback):
    def __init__(self, x_holdout, y_holdout, logdir, batch_size=512):
        super().__init__()
        self.dataset = (tf.data.Dataset.from_tensor_slices((x_holdout, y_holdout))
                        .batch(batch_size).prefetch(tf.data.AUTOTUNE))
        self.logdir = logdir
        self.history = []
        self.writer = None

    def on_train_begin(self, logs=None):
        self.writer = tf.summary.create_file_writer(self.logdir)

    def on_epoch_end(self, epoch, logs=None):
        pos_hist = np.zeros(N_BINS, dtype=np.int64)
        neg_hist = np.zeros(N_BINS, dtype=np.int64)
        for x, y in self.dataset:
            probs = tf.sigmoid(self.model(x, training=False)).numpy().ravel()
            bins = np.minimum((probs * N_BINS).astype(np.int64), N_BINS - 1)
            labels = y.numpy().ravel().astype(bool)
            pos_hist += np.bincount(bins[labels], minlength=N_BINS)
            neg_hist += np.bincount(bins[~labels], minlength=N_BINS)
        tpr = np.cumsum(pos_hist[::-1]) / max(pos_hist.sum(), 1)
        fpr = np.cumsum(neg_hist[::-1]) / max(neg_hist.sum(), 1)
        auc = float(np.trapz(np.concatenate([[0.0], tpr]), np.concatenate([[0.0], fpr])))
        self.history.append(auc)
        if logs is not None:
            logs["holdout_auc"] = auc
        with self.writer.as_default():
            tf.summary.scalar("holdout_auc", auc, step=epoch)

    def on_train_end(self, logs=None):
        self.writer.close()


def build_model(n_features):
    inputs = tf.keras.Input((n_features,))
    x = tf.keras.layers.Dense(256, activation="relu")(inputs)
    x = tf.keras.layers.Dropout(0.3)(x)
    x = tf.keras.layers.Dense(128, activation="relu")(x)
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(x))
    model.compile(optimizer="adam", loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[tf.keras.metrics.AUC(from_logits=True, name="auc")])
    return model


def main(data_path="ctr_splits.npz", epochs=40):
    data = np.load(data_path)
    model = build_model(data["x_train"].shape[1])
    holdout = HoldoutAUC(data["x_holdout"], data["y_holdout"], logdir="logs/holdout")
    model.fit(data["x_train"], data["y_train"], validation_data=(data["x_val"], data["y_val"]),
              epochs=epochs, batch_size=1024, callbacks=[holdout,
                                                         tf.keras.callbacks.EarlyStopping(monitor="holdout_auc", mode="max", patience=5)])
    print("best hold-out AUC:", max(holdout.history))
