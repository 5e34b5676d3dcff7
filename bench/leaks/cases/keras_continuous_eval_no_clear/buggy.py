"""Sidecar evaluator rebuilds the Keras model for every new checkpoint without resetting Keras state

Source: https://github.com/tensorflow/estimator/pull/78
Style: keras-fit
Kind: Keras models built in a loop without clear_session: continuous evaluation keeps every evaluation model in Keras's global cache, so the evaluator's memory grows for the whole training run
"""
import argparse
import json
import os

import numpy as np
import tensorflow as tf


def eval_dataset(rng, n=2000):
    images = rng.random((n, 96, 96, 3), dtype=np.float32)
    labels = rng.integers(0, 10, n)
    return tf.data.Dataset.from_tensor_slices((images, labels)).batch(64)


def evaluate_checkpoints(model_dir, timeout_s):
    rng = np.random.default_rng(0)
    dataset = eval_dataset(rng)
    history = []
    for checkpoint in tf.train.checkpoints_iterator(model_dir, timeout=timeout_s):
        model = tf.keras.applications.ResNet50(weights=None, input_shape=(96, 96, 3), classes=10)  # leak: LL503
        model.compile(loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        tf.train.Checkpoint(model=model).restore(checkpoint).expect_partial()
        loss, accuracy = model.evaluate(dataset, verbose=0)
        history.append({"checkpoint": os.path.basename(checkpoint), "loss": loss, "accuracy": accuracy})
        print(history[-1])
        with open(os.path.join(model_dir, "eval_history.json"), "w") as handle:
            json.dump(history, handle, indent=1)
    return history


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Evaluate each new checkpoint written by the trainer.")
    parser.add_argument("--model-dir", default="runs/resnet50")
    parser.add_argument("--timeout", type=int, default=3600)
    args = parser.parse_args()
    evaluate_checkpoints(args.model_dir, args.timeout)
