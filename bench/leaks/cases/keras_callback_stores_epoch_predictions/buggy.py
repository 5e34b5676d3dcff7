"""Validation callback keeps the full prediction array of every epoch in a list

Source: https://codemia.io/knowledge-hub/path/keras_occupies_an_indefinitely_increasing_amount_of_memory_for_each_epoch
Style: keras-callback
Kind: per-epoch outputs retained by a callback (family cache-growth): one full validation prediction array is kept per epoch for the whole run, so memory grows every epoch
"""
import numpy as np
import tensorflow as tf
from sklearn.metrics import roc_auc_score


class ValidationAUC(tf.keras.callbacks.Callback):
    def __init__(self, x_val, y_val):
        super().__init__()
        self.x_val = x_val
        self.y_val = y_val
        self.epoch_predictions = []
        self.best_auc = 0.0

    def on_epoch_end(self, epoch, logs=None):
        predictions = self.model.predict(self.x_val, batch_size=1024, verbose=0).ravel()
        self.epoch_predictions.append(predictions)  # leak: new:cache-growth
        auc = roc_auc_score(self.y_val, predictions)
        self.best_auc = max(self.best_auc, auc)
        if logs is not None:
            logs["val_auc"] = auc
        print(f"epoch {epoch}: val_auc {auc:.4f} (best {self.best_auc:.4f})")


def build_model(n_features):
    model = tf.keras.Sequential([
        tf.keras.Input((n_features,)),
        tf.keras.layers.Dense(512, activation="relu"),
        tf.keras.layers.Dense(256, activation="relu"),
        tf.keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1_200_000, 120)).astype(np.float32)
    y = (x[:, :10].sum(axis=1) + rng.standard_normal(len(x)) > 0).astype(np.int32)
    x_train, y_train, x_val, y_val = x[:1_000_000], y[:1_000_000], x[1_000_000:], y[1_000_000:]
    model = build_model(x.shape[1])
    model.fit(x_train, y_train, batch_size=2048, epochs=300, callbacks=[ValidationAUC(x_val, y_val)], verbose=0)
