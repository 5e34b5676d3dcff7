"""A Keras callback records the process's peak resident memory at the end of every epoch of a siamese network's fit

Source: https://github.com/keras-team/keras/issues/5935
Source: https://github.com/keras-team/keras/issues/13195
Style: keras-callback
Kind: negative: resembles a callback keeping per-epoch data on itself (LL507) while fit() runs for hundreds of epochs; the callback stores one Python int per epoch (ru_maxrss), never model outputs, and the model is fit once on fixed arrays; in the first report the process RSS measured this way stayed flat while `free -m` (page cache) suggested a leak
"""
import resource

import numpy as np
import tensorflow as tf
from tensorflow import keras


class PeakMemoryLogger(keras.callbacks.Callback):
    def __init__(self, every=1):
        super().__init__()
        self.every = every
        self.peak_kb = []

    def on_epoch_end(self, epoch, logs=None):
        if epoch % self.every == 0:
            self.peak_kb.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
            if logs is not None:
                logs["peak_rss_mb"] = self.peak_kb[-1] / 1024.0


def euclidean_distance(pair):
    a, b = pair
    return tf.sqrt(tf.maximum(tf.reduce_sum(tf.square(a - b), axis=1, keepdims=True), 1e-7))


def contrastive_loss(y_true, distance, margin=1.0):
    y_true = tf.cast(y_true, distance.dtype)
    return tf.reduce_mean(y_true * tf.square(distance) + (1 - y_true) * tf.square(tf.maximum(margin - distance, 0)))


def build_siamese(input_dim=784):
    base = keras.Sequential([keras.layers.Dense(128, activation="relu"), keras.layers.Dropout(0.1),
                             keras.layers.Dense(128, activation="relu"), keras.layers.Dropout(0.1),
                             keras.layers.Dense(128, activation="relu")])
    left, right = keras.Input((input_dim,)), keras.Input((input_dim,))
    distance = keras.layers.Lambda(euclidean_distance)([base(left), base(right)])
    model = keras.Model([left, right], distance)
    model.compile(loss=contrastive_loss, optimizer=keras.optimizers.RMSprop())
    return model


def make_pairs(x, y, rng):
    idx_by_class = [np.flatnonzero(y == c) for c in range(10)]
    left, right, same = [], [], []
    for c, idx in enumerate(idx_by_class):
        for i in idx[:-1]:
            j = rng.choice(idx)
            k = rng.choice(idx_by_class[(c + rng.integers(1, 10)) % 10])
            left += [x[i], x[i]]
            right += [x[j], x[k]]
            same += [1.0, 0.0]
    return np.array(left), np.array(right), np.array(same, dtype=np.float32)


if __name__ == "__main__":
    (x_tr, y_tr), (x_te, y_te) = keras.datasets.mnist.load_data()
    x_tr = x_tr.reshape(-1, 784).astype("float32") / 255.0
    x_te = x_te.reshape(-1, 784).astype("float32") / 255.0
    rng = np.random.default_rng(0)
    tr_l, tr_r, tr_y = make_pairs(x_tr, y_tr, rng)
    te_l, te_r, te_y = make_pairs(x_te, y_te, rng)
    probe = PeakMemoryLogger()
    model = build_siamese()
    model.fit([tr_l, tr_r], tr_y, batch_size=128, epochs=200, validation_data=([te_l, te_r], te_y),
              callbacks=[probe], verbose=2)
    print("peak RSS per epoch (MB):", [round(kb / 1024.0, 1) for kb in probe.peak_kb])
