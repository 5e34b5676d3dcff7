"""Stratified k-fold cross-validation builds and fits a new Keras model per fold without clearing the session

Source: https://github.com/keras-team/keras/issues/2102
Style: keras-fit
Kind: Keras models built in a loop without clear_session: every fold's model stays in the backend graph/global state; memory grows fold after fold
"""
import numpy as np
from keras import backend as K
from keras.layers import Dense, Dropout
from keras.models import Sequential
from sklearn.model_selection import StratifiedKFold

N_SPLITS = 10
REPEATS = 5


def load_dataset(rng, n=5000, n_features=60):
    """Stands in for the tabular dataset of the report: 60 numeric features, binary target."""
    X = rng.standard_normal((n, n_features)).astype(np.float32)
    y = (X[:, :5].sum(axis=1) > 0).astype(np.int32)
    return X, y


def cross_validate(X, y, seed):
    folds = StratifiedKFold(n_splits=N_SPLITS, shuffle=True, random_state=seed)
    scores = []
    for fold, (train_idx, test_idx) in enumerate(folds.split(X, y)):
        K.clear_session()  # drop the previous fold's model before building the next one
        model = Sequential()
        model.add(Dense(256, activation="relu", input_dim=X.shape[1]))
        model.add(Dropout(0.3))
        model.add(Dense(1, activation="sigmoid"))
        model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
        model.fit(X[train_idx], y[train_idx], epochs=20, batch_size=64, verbose=0)
        _, accuracy = model.evaluate(X[test_idx], y[test_idx], verbose=0)
        scores.append(accuracy)
        print(f"seed {seed} fold {fold}: accuracy {accuracy:.3f}")
    return float(np.mean(scores))


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    X, y = load_dataset(rng)
    print("backend:", K.backend())
    results = [cross_validate(X, y, seed) for seed in range(REPEATS)]
    print("mean accuracy over repeats:", np.mean(results))
