"""Optuna study whose objective calls tf.keras.backend.clear_session() before building each trial's model

Source: https://github.com/optuna/optuna/pull/545
Style: keras-fit
Kind: negative: resembles a Keras model built per trial without clear_session (LL503); the session is cleared at the start of every trial
"""
import optuna
import tensorflow as tf

(x_train, y_train), (x_valid, y_valid) = tf.keras.datasets.fashion_mnist.load_data()
x_train, x_valid = x_train[:3000] / 255.0, x_valid[:1000] / 255.0
y_train, y_valid = y_train[:3000], y_valid[:1000]


def create_model(trial):
    model = tf.keras.Sequential([tf.keras.Input((28, 28)), tf.keras.layers.Flatten()])
    for i in range(trial.suggest_int("n_hidden", 1, 3)):
        model.add(tf.keras.layers.Dense(trial.suggest_int(f"units_{i}", 32, 512, log=True), activation="relu"))
        model.add(tf.keras.layers.Dropout(trial.suggest_float(f"dropout_{i}", 0.0, 0.5)))
    model.add(tf.keras.layers.Dense(10, activation="softmax"))
    model.compile(
        optimizer=tf.keras.optimizers.Adam(trial.suggest_float("lr", 1e-4, 1e-2, log=True)),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


def objective(trial):
    tf.keras.backend.clear_session()
    model = create_model(trial)
    model.fit(x_train, y_train, batch_size=128, epochs=10, verbose=0, validation_data=(x_valid, y_valid))
    return model.evaluate(x_valid, y_valid, verbose=0)[1]


if __name__ == "__main__":
    study = optuna.create_study(direction="maximize")
    study.optimize(objective, n_trials=100, gc_after_trial=True)
    print("best accuracy:", study.best_value)
    for key, value in study.best_trial.params.items():
        print(f"  {key}: {value}")
