"""Cross-validation builds a tf.data.Dataset.from_generator for every fold; each generator closes over the fold's arrays

Source: https://github.com/tensorflow/tensorflow/issues/57690
Source: https://github.com/tensorflow/tensorflow/pull/123530
Style: keras-fit
Kind: data pipeline rebuilt per fold (family dataset-per-epoch): from_generator registers its Python generator in a registry owned by the global default graph, so every fold's generator and the feature/label arrays it captures stay referenced for the whole process; host memory grows by a training set per fold even with clear_session()
"""
import gc

import numpy as np
import tensorflow as tf
from sklearn.model_selection import KFold

FEATURES = 512
BATCH_SIZE = 256


class FoldData:
    def __init__(self, x, y):
        self.x = x.copy()
        self.y = y.copy()


def make_dataset(fold: FoldData, shuffle: bool) -> tf.data.Dataset:
    # no Python generator: the dataset owns its tensors and is freed with the fold
    ds = tf.data.Dataset.from_tensor_slices((fold.x, fold.y))
    if shuffle:
        ds = ds.shuffle(len(fold.x), reshuffle_each_iteration=True)
    return ds.batch(BATCH_SIZE).prefetch(tf.data.AUTOTUNE)


def build_model():
    model = tf.keras.Sequential([
        tf.keras.Input((FEATURES,)),
        tf.keras.layers.Dense(256, activation="relu"),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Dense(10),
    ])
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def cross_validate(x, y, n_splits=10, repeats=5, epochs=3):
    scores = []
    for repeat in range(repeats):
        folds = KFold(n_splits=n_splits, shuffle=True, random_state=repeat)
        for fold_id, (train_idx, val_idx) in enumerate(folds.split(x)):
            tf.keras.backend.clear_session()
            train_ds = make_dataset(FoldData(x[train_idx], y[train_idx]), shuffle=True)
            val_ds = make_dataset(FoldData(x[val_idx], y[val_idx]), shuffle=False)
            model = build_model()
            model.fit(train_ds, validation_data=val_ds, epochs=epochs, verbose=0)
            _, acc = model.evaluate(val_ds, verbose=0)
            scores.append(acc)
            print(f"repeat {repeat} fold {fold_id}: accuracy {acc:.4f}")
            del model, train_ds, val_ds
            gc.collect()
    return float(np.mean(scores)), float(np.std(scores))


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    features = rng.standard_normal((200_000, FEATURES)).astype(np.float32)
    labels = rng.integers(0, 10, size=200_000).astype(np.int32)
    print(cross_validate(features, labels))
