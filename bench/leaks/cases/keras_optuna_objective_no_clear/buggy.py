"""Optuna objective builds, fits and evaluates a new Keras model per trial without clearing the session

Source: https://github.com/optuna/optuna/issues/1178
Source: https://github.com/optuna/optuna/pull/545
Style: keras-fit
Kind: Keras model built per trial without clear_session: study.optimize calls the objective in its own loop; memory grows ~1 GB per trial until OOM
"""
import optuna
import tensorflow as tf
from sklearn.datasets import make_regression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

FEATURES, TARGET = make_regression(n_samples=30_000, n_features=80, n_informative=25, noise=5.0, random_state=1)
FEATURES = StandardScaler().fit_transform(FEATURES)
TRAIN_X, HOLDOUT_X, TRAIN_Y, HOLDOUT_Y = train_test_split(FEATURES, TARGET, test_size=0.25, random_state=1)


def suggest_layers(trial):
    n_layers = trial.suggest_int("n_layers", 1, 4)
    return [trial.suggest_int(f"units_{i}", 32, 1024, log=True) for i in range(n_layers)]


def score_configuration(trial):
    net = tf.keras.Sequential([tf.keras.Input(shape=(80,))])  # leak: LL503
    for units in suggest_layers(trial):
        net.add(tf.keras.layers.Dense(units, activation="swish"))
    net.add(tf.keras.layers.Dense(1))
    learning_rate = trial.suggest_float("learning_rate", 1e-4, 1e-2, log=True)
    net.compile(optimizer=tf.keras.optimizers.Adam(learning_rate), loss="mse")
    stop_early = tf.keras.callbacks.EarlyStopping(patience=2, restore_best_weights=True)
    net.fit(TRAIN_X, TRAIN_Y, validation_split=0.2, epochs=30, batch_size=256, callbacks=[stop_early], verbose=0)
    return float(net.evaluate(HOLDOUT_X, HOLDOUT_Y, verbose=0))


def report(study):
    for trial in sorted(study.trials, key=lambda t: t.value if t.value is not None else float("inf"))[:5]:
        print(f"trial {trial.number}: mse {trial.value:.2f} {trial.params}")


if __name__ == "__main__":
    study = optuna.create_study(direction="minimize", study_name="mlp-regressor")
    study.optimize(score_configuration, n_trials=300)
    report(study)
    print("best configuration:", study.best_trial.params, "holdout mse:", study.best_value)
