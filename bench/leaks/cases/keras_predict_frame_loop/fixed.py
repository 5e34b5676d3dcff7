"""Webcam classifier calls MobileNetV2.predict() on one frame per loop iteration

Source: https://github.com/keras-team/keras/issues/13118
Style: keras-fit
Kind: Keras predict() per item in a loop: each call builds a data adapter and predict function; memory climbs steadily to 20+ GB
"""
import time

import numpy as np
import tensorflow as tf
from tensorflow import keras

LABELS_URL = "imagenet_class_index.json"


def read_frame(rng):
    """Stands in for cv2.VideoCapture.read(): one 224x224 RGB frame."""
    return rng.integers(0, 256, (224, 224, 3)).astype(np.float32)


def top_label(probs, class_names):
    index = int(np.argmax(probs))
    return class_names.get(index, str(index)), float(probs[index])


def main(max_frames=None):
    model = keras.applications.mobilenet_v2.MobileNetV2(weights=None)
    infer = tf.function(lambda x: model(x, training=False))  # one traced forward pass, reused per frame
    class_names = {i: f"class_{i}" for i in range(1000)}
    rng = np.random.default_rng(0)
    frames = 0
    started = time.time()
    while max_frames is None or frames < max_frames:
        frame = keras.applications.mobilenet_v2.preprocess_input(read_frame(rng))
        probs = infer(tf.constant(frame[None])).numpy()[0]
        label, score = top_label(probs, class_names)
        frames += 1
        if frames % 100 == 0:
            fps = frames / (time.time() - started)
            print(f"{frames} frames, {fps:.1f} fps, last: {label} ({score:.2f})")


if __name__ == "__main__":
    main()
