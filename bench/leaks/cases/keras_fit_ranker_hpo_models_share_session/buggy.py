"""A Bayesian hyperparameter search builds and fits a new listwise ranking network for every point in one Keras session

Source: https://github.com/kiudee/cs-ranking/issues/148
Style: keras-fit
Kind: Keras models built in a loop without clear_session: every objective call creates a new scorer network, optimizer and fit state in the same session; the older models are never removed and memory grows trial after trial
"""
import numpy as np
import tensorflow as tf
from skopt import gp_minimize
from skopt.space import Integer, Real
from tensorflow import keras

N_OBJECTS, N_FEATURES = 10, 24


def make_rankings(n_instances, rng):
    X = rng.normal(size=(n_instances, N_OBJECTS, N_FEATURES)).astype("float32")
    w = rng.normal(size=N_FEATURES)
    utility = X @ w + 0.3 * rng.normal(size=(n_instances, N_OBJECTS))
    ranks = np.argsort(np.argsort(-utility, axis=1), axis=1)
    return X, ranks


def listnet_loss(ranks, scores):
    target = tf.nn.softmax(-tf.cast(ranks, tf.float32), axis=-1)
    return -tf.reduce_sum(target * tf.nn.log_softmax(scores, axis=-1), axis=-1)


def kendall_tau(ranks, scores):
    pred = np.argsort(np.argsort(-scores, axis=1), axis=1)
    agree = 0.0
    for r, p in zip(ranks, pred):
        s = np.sign(r[:, None] - r[None, :]) * np.sign(p[:, None] - p[None, :])
        agree += s.sum() / (N_OBJECTS * (N_OBJECTS - 1))
    return agree / len(ranks)


rng = np.random.default_rng(42)
X_train, r_train = make_rankings(20_000, rng)
X_val, r_val = make_rankings(4_000, rng)
search_space = [Integer(1, 6, name="n_layers"), Integer(16, 256, name="n_units"),
                Real(1e-5, 1e-2, prior="log-uniform", name="learning_rate"),
                Real(1e-8, 1e-2, prior="log-uniform", name="l2")]


def objective(point):
    n_layers, n_units, learning_rate, l2 = point
    objects = keras.Input(shape=(N_OBJECTS, N_FEATURES))
    x = objects
    for _ in range(int(n_layers)):
        x = keras.layers.Dense(int(n_units), activation="selu", kernel_regularizer=keras.regularizers.l2(l2))(x)
    pooled = keras.layers.GlobalAveragePooling1D()(x)
    context = keras.layers.RepeatVector(N_OBJECTS)(pooled)
    scores = keras.layers.Dense(1)(keras.layers.Concatenate()([x, context]))
    ranker = keras.Model(objects, keras.layers.Reshape((N_OBJECTS,))(scores))  # leak: LL503
    ranker.compile(optimizer=keras.optimizers.SGD(learning_rate, momentum=0.9, nesterov=True), loss=listnet_loss)
    ranker.fit(X_train, r_train, batch_size=256, epochs=30, verbose=0)
    tau = kendall_tau(r_val, ranker.predict(X_val, batch_size=1024, verbose=0))
    print(f"layers={n_layers} units={n_units} lr={learning_rate:.2e} l2={l2:.1e}: tau={tau:.4f}")
    return -tau


if __name__ == "__main__":
    result = gp_minimize(objective, search_space, n_calls=150, random_state=0)
    print("best point", result.x, "tau", -result.fun)
