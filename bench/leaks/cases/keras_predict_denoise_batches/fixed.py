"""Movie denoiser iterates over a keras Sequence and calls model.predict() on each batch it yields

Source: https://github.com/AllenInstitute/deepinterpolation/pull/78
Style: keras-fit
Kind: Keras predict() per batch in a loop: GPU memory allocations grow batch after batch over a long two-photon movie
"""
import argparse

import h5py
import numpy as np
import tensorflow as tf


class FrameWindows(tf.keras.utils.Sequence):
    """Yields (pre/post frames, center frame) windows of a movie, batch by batch."""

    def __init__(self, movie, pre_post=30, batch_size=5):
        self.movie = movie
        self.pre_post = pre_post
        self.batch_size = batch_size
        self.centers = np.arange(pre_post, len(movie) - pre_post)

    def __len__(self):
        return int(np.ceil(len(self.centers) / self.batch_size))

    def __getitem__(self, index):
        centers = self.centers[index * self.batch_size:(index + 1) * self.batch_size]
        windows = np.stack([
            np.concatenate([self.movie[c - self.pre_post:c], self.movie[c + 1:c + 1 + self.pre_post]]).transpose(1, 2, 0)
            for c in centers
        ])
        return windows.astype(np.float32), centers


def run_inference(model_path, movie_path, output_path):
    model = tf.keras.models.load_model(model_path, compile=False)
    with h5py.File(movie_path, "r") as handle:
        movie = handle["data"][()]
    generator = FrameWindows(movie)
    with h5py.File(output_path, "w") as out:
        denoised = out.create_dataset("data", shape=(len(generator.centers),) + movie.shape[1:], dtype="float32")
        for index in range(len(generator)):
            window_batch = generator[index]
            # One batch in, one batch out: predict_on_batch skips predict()'s dataset/iterator setup.
            predictions = model.predict_on_batch(window_batch[0])
            start = index * generator.batch_size
            denoised[start:start + len(predictions)] = predictions[..., 0]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("movie")
    parser.add_argument("--output", default="denoised.h5")
    args = parser.parse_args()
    run_inference(args.model, args.movie, args.output)
