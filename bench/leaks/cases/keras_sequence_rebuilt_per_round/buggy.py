"""Simulation-driven training creates a new keras.utils.Sequence and calls fit() once per data round

Source: https://github.com/keras-team/keras/issues/16947
Style: keras-fit
Kind: data pipeline rebuilt per round (family dataset-per-epoch): each new Sequence passed to fit() gets its own data adapter and enqueuer state that are not released; memory runs away over the rounds
"""
import numpy as np
import tensorflow as tf

IMAGE = 64


class SimulatedParticles(tf.keras.utils.Sequence):
    """Renders synthetic microscopy images of particles with known positions."""

    def __init__(self, n_batches, batch_size, seed):
        super().__init__()
        self.n_batches = n_batches
        self.batch_size = batch_size
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return self.n_batches

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


if __name__ == "__main__":
    locator = build_locator()
    for round_index in range(1000):  # fresh simulated data each round
        data = SimulatedParticles(n_batches=32, batch_size=16, seed=round_index)  # leak: new:dataset-per-epoch
        history = locator.fit(data, epochs=1, verbose=0)
        if round_index % 50 == 0:
            print(f"round {round_index}: mae {history.history['loss'][-1]:.4f}")
