"""Simulation-driven training creates a new keras.utils.Sequence and calls fit() once per data round

Source: https://github.com/keras-team/keras/issues/16947
Style: keras-fit
Kind: data pipeline rebuilt per round (family dataset-per-epoch): each new Sequence passed to fit() gets its own data adapter and enqueuer state that are not released; memory runs away over the rounds
"""
import numpy as np
import tensorflow as tf

IMAGE = 64


class SimulatedParticles(tf.keras.utils.Sequence):
    """Renders synthetic microscopy images of particles; a new random stream starts every epoch."""

    def __init__(self, n_batches, batch_size, seed):
        super().__init__()
        self.n_batches = n_batches
        self.batch_size = batch_size
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return self.n_batches

    def on_epoch_end(self):
        self.seed += 1
        self.rng = np.random.default_rng(self.seed)  # fresh simulated data, same Sequence object

    def __getitem__(self, index):
        positions = self.rng.random((self.batch_size, 2)) * IMAGE
        grid = np.stack(np.meshgrid(np.arange(IMAGE), np.arange(IMAGE)), axis=-1)
        distance = np.linalg.norm(grid[None] - positions[:, None, None, :], axis=-1)
        images = np.exp(-(distance ** 2) / 8.0)[..., None] + 0.05 * self.rng.standard_normal((self.batch_size, IMAGE, IMAGE, 1))
        return images.astype(np.float32), (positions / IMAGE).astype(np.float32)


def build_locator():
    model = tf.keras.Sequential([
        tf.keras.Input((IMAGE, IMAGE, 1)),
        tf.keras.layers.Conv2D(32, 3, activation="relu"),
        tf.keras.layers.MaxPool2D(),
        tf.keras.layers.Conv2D(64, 3, activation="relu"),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(2),
    ])
    model.compile(optimizer="adam", loss="mae")
    return model


def print_every_50(epoch, logs):
    if epoch % 50 == 0:
        print(f"round {epoch}: mae {logs['loss']:.4f}")


if __name__ == "__main__":
    locator = build_locator()
    data = SimulatedParticles(n_batches=32, batch_size=16, seed=0)
    report = tf.keras.callbacks.LambdaCallback(on_epoch_end=print_every_50)
    locator.fit(data, epochs=1000, verbose=0, callbacks=[report])
