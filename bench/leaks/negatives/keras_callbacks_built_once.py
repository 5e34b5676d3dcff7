"""Training resumed in rounds: the callbacks are constructed once and the same list is passed to every fit() round

Source: https://github.com/keras-team/keras/issues/9935
Style: keras-fit
Kind: negative: resembles callbacks constructed once per epoch/round; CSVLogger and ModelCheckpoint are created before the loop and reused
"""
import numpy as np
import tensorflow as tf

ROUNDS = 20
EPOCHS_PER_ROUND = 5


def build_model():
    model = tf.keras.Sequential([
        tf.keras.Input((16,)),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def fresh_experience(rng, n=8192):
    x = rng.standard_normal((n, 16)).astype(np.float32)
    return x, (np.sin(x[:, :1]) + 0.05 * rng.standard_normal((n, 1))).astype(np.float32)


def main():
    rng = np.random.default_rng(0)
    model = build_model()
    callbacks = [
        tf.keras.callbacks.CSVLogger("training_log.csv", append=True),
        tf.keras.callbacks.ModelCheckpoint("checkpoints/latest.weights.h5", save_weights_only=True),
    ]
    epoch = 0
    for round_index in range(ROUNDS):
        x, y = fresh_experience(rng)
        model.fit(x, y, initial_epoch=epoch, epochs=epoch + EPOCHS_PER_ROUND, batch_size=256,
                  verbose=0, callbacks=callbacks)
        epoch += EPOCHS_PER_ROUND
        print(f"round {round_index}: trained through epoch {epoch}")


if __name__ == "__main__":
    main()
