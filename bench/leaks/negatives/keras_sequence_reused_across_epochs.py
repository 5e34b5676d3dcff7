"""One keras.utils.Sequence regenerates its data in on_epoch_end, and fit() runs once over many epochs

Source: https://github.com/keras-team/keras/issues/16947
Style: keras-fit
Kind: negative: resembles a data pipeline rebuilt per epoch; the same Sequence object refreshes its samples in on_epoch_end
"""
import numpy as np
import tensorflow as tf

SIGNAL = 512


class NoisyChirps(tf.keras.utils.Sequence):
    def __init__(self, n_batches=64, batch_size=32, seed=0):
        super().__init__()
        self.n_batches = n_batches
        self.batch_size = batch_size
        self.rng = np.random.default_rng(seed)
        self.on_epoch_end()

    def on_epoch_end(self):
        count = self.n_batches * self.batch_size
        t = np.linspace(0, 1, SIGNAL)
        rates = self.rng.uniform(5, 60, (count, 1))
        self.clean = np.sin(2 * np.pi * rates * t * t).astype(np.float32)
        self.noisy = (self.clean + 0.3 * self.rng.standard_normal(self.clean.shape)).astype(np.float32)

    def __len__(self):
        return self.n_batches

    def __getitem__(self, index):
        part = slice(index * self.batch_size, (index + 1) * self.batch_size)
        return self.noisy[part, :, None], self.clean[part, :, None]


def build_denoiser():
    model = tf.keras.Sequential([
        tf.keras.Input((SIGNAL, 1)),
        tf.keras.layers.Conv1D(32, 9, padding="same", activation="relu"),
        tf.keras.layers.Conv1D(32, 9, padding="same", activation="relu"),
        tf.keras.layers.Conv1D(1, 9, padding="same"),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


if __name__ == "__main__":
    denoiser = build_denoiser()
    history = denoiser.fit(NoisyChirps(), epochs=500, verbose=0)
    print("final loss:", history.history["loss"][-1])
