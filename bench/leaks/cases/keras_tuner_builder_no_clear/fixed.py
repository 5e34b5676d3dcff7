"""keras-tuner Hyperband search whose model-building function never clears the Keras session

Source: https://github.com/keras-team/keras-tuner/issues/395
Style: keras-fit
Kind: Keras model built per trial without clear_session: the tuner calls the builder once per trial in its own loop, and RAM grows about 1 GB every 20 trials
"""
import keras_tuner as kt
import numpy as np
import tensorflow as tf

WINDOW = 48


def make_windows(series, window=WINDOW):
    x = np.stack([series[i:i + window] for i in range(len(series) - window)])
    return x[..., None].astype(np.float32), series[window:].astype(np.float32)


def forecaster(hp):
    tf.keras.backend.clear_session()  # the tuner keeps only hyperparameters and scores, not models
    model = tf.keras.Sequential([tf.keras.Input((WINDOW, 1))])
    for i in range(hp.Int("recurrent_layers", 1, 3)):
        last = i == hp.get("recurrent_layers") - 1
        model.add(tf.keras.layers.GRU(hp.Int(f"gru_units_{i}", 16, 256, sampling="log"), return_sequences=not last))
    model.add(tf.keras.layers.Dropout(hp.Float("dropout", 0.0, 0.3, step=0.05)))
    model.add(tf.keras.layers.Dense(1))
    model.compile(
        optimizer=tf.keras.optimizers.Adam(hp.Float("lr", 1e-4, 3e-3, sampling="log")),
        loss="mae",
        metrics=["mape"],
    )
    return model


def main():
    rng = np.random.default_rng(0)
    t = np.arange(20_000)
    series = np.sin(t / 50) + 0.3 * np.sin(t / 7) + 0.1 * rng.standard_normal(t.size)
    x, y = make_windows(series)
    split = int(0.8 * len(x))
    tuner = kt.Hyperband(forecaster, objective="val_loss", max_epochs=30, factor=3,
                         directory="tuning", project_name="gru_forecaster")
    tuner.search(x[:split], y[:split], validation_data=(x[split:], y[split:]), batch_size=256,
                 callbacks=[tf.keras.callbacks.EarlyStopping(patience=3)])
    best = tuner.get_best_hyperparameters(1)[0]
    print("best:", best.values)


if __name__ == "__main__":
    main()
