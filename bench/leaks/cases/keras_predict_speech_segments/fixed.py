"""Speech/music segmenter runs its CNN with model.predict() once per audio file in a batch job

Source: https://github.com/ina-foss/inaSpeechSegmenter/pull/80
Style: keras-fit
Kind: Keras predict() per file in a loop: CPU memory leaks through predict's global state over a long list of media files
"""
import sys

import numpy as np
import tensorflow as tf
from tensorflow import keras

PATCH = 68
N_MELS = 24


def build_segmenter():
    model = keras.Sequential([
        keras.layers.Input((PATCH, N_MELS, 1)),
        keras.layers.Conv2D(64, 3, activation="relu"),
        keras.layers.MaxPool2D(),
        keras.layers.Conv2D(128, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(3, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="categorical_crossentropy")
    return model


def mel_patches(path, rng):
    """Stands in for loading the file, computing log-mel bands and cutting 68-frame patches."""
    n_patches = int(rng.integers(500, 5000))
    return rng.standard_normal((n_patches, PATCH, N_MELS, 1)).astype(np.float32)


def segment(labels, frame_seconds=0.02 * PATCH):
    segments, start = [], 0
    for i in range(1, len(labels) + 1):
        if i == len(labels) or labels[i] != labels[start]:
            segments.append((("speech", "music", "noise")[labels[start]], start * frame_seconds, i * frame_seconds))
            start = i
    return segments


def main(paths):
    model = build_segmenter()
    forward = tf.function(lambda x: model(x, training=False),
                          input_signature=[tf.TensorSpec([None, PATCH, N_MELS, 1], tf.float32)])
    rng = np.random.default_rng(0)
    for path in paths:
        patches = mel_patches(path, rng)
        probs = np.concatenate([forward(patches[i:i + 256]).numpy() for i in range(0, len(patches), 256)])
        print(path, segment(probs.argmax(axis=1))[:3])


if __name__ == "__main__":
    main(sys.argv[1:] or [f"broadcast_{i:05d}.wav" for i in range(10_000)])
