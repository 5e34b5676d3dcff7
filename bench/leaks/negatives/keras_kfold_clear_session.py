"""Out-of-fold predictions with a fresh Keras model per fold and tf.keras.backend.clear_session() at each fold

Source: https://github.com/keras-team/keras/issues/2102
Style: keras-fit
Kind: negative: resembles a k-fold loop leaking models (LL503) and predict() in a loop (LL501); the session is cleared per fold and predict runs once per freshly trained model
"""
import numpy as np
import pandas as pd
import tensorflow as tf
from sklearn.model_selection import KFold

N_FOLDS = 5


def make_regressor(n_features):
    model = tf.keras.Sequential([
        tf.keras.Input((n_features,)),
        tf.keras.layers.Dense(256, activation="relu"),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(1),
    ])
    model.compile(optimizer=tf.keras.optimizers.Adam(3e-4), loss="mae")
    return model


def out_of_fold(features, target, test_features):
    oof = np.zeros(len(features), dtype=np.float32)
    test_pred = np.zeros(len(test_features), dtype=np.float32)
    for fold, (train_idx, val_idx) in enumerate(KFold(N_FOLDS, shuffle=True, random_state=42).split(features)):
        tf.keras.backend.clear_session()
        model = make_regressor(features.shape[1])
        model.fit(features[train_idx], target[train_idx], epochs=25, batch_size=512, verbose=0,
                  validation_data=(features[val_idx], target[val_idx]),
                  callbacks=[tf.keras.callbacks.EarlyStopping(patience=3, restore_best_weights=True)])
        oof[val_idx] = model.predict(features[val_idx], batch_size=2048, verbose=0).ravel()
        test_pred += model.predict(test_features, batch_size=2048, verbose=0).ravel() / N_FOLDS
        print(f"fold {fold}: mae {np.abs(oof[val_idx] - target[val_idx]).mean():.4f}")
    return oof, test_pred


if __name__ == "__main__":
    rng = np.random.default_rng(7)
    train = rng.standard_normal((60_000, 40)).astype(np.float32)
    target = (train[:, :4].sum(axis=1) + rng.standard_normal(60_000) * 0.1).astype(np.float32)
    test = rng.standard_normal((20_000, 40)).astype(np.float32)
    oof, test_pred = out_of_fold(train, target, test)
    pd.DataFrame({"prediction": test_pred}).to_csv("submission.csv", index_label="id")
