"""run_predictions() defines its @tf.function predict_step inside, and is called for every cell type

Source: https://github.com/YosefLab/epitome/issues/43
Style: tf2-loop
Kind: new tf.function per call: each run_predictions() call creates and traces a new predict_step ("N out of the last N calls triggered retracing")
"""
import numpy as np
import tensorflow as tf


class PeakPredictor:
    def __init__(self, n_features, n_targets, num_samples=30):
        self.num_samples = num_samples
        self.model = tf.keras.Sequential([
            tf.keras.layers.Dense(256, activation="relu", input_shape=(n_features,)),
            tf.keras.layers.Dropout(0.2),
            tf.keras.layers.Dense(n_targets),
        ])

    def score_regions(self, dataset):
        @tf.function  # leak: LL502
        def mc_step(inputs):
            samples = tf.stack([tf.sigmoid(self.model(inputs, training=True)) for _ in range(self.num_samples)])
            return tf.reduce_mean(samples, axis=0), tf.math.reduce_std(samples, axis=0)

        means, stds = [], []
        for batch in dataset:
            mean, std = mc_step(batch)
            means.append(mean.numpy())
            stds.append(std.numpy())
        return np.concatenate(means), np.concatenate(stds)


def features_for(cell_type, rng, n_regions=20_000, n_features=120):
    return tf.data.Dataset.from_tensor_slices(
        rng.random((n_regions, n_features), dtype=np.float32)
    ).batch(256)


if __name__ == "__main__":
    rng = np.random.default_rng(1)
    peaks = PeakPredictor(n_features=120, n_targets=40)
    for cell_type in ["K562", "HepG2", "GM12878", "A549", "IMR-90", "H1"] * 50:
        mean, std = peaks.score_regions(features_for(cell_type, rng))
        print(cell_type, mean.mean(), std.mean())
