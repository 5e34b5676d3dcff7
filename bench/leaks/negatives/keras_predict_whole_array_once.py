"""Batch scoring job calls model.predict() once on the whole test array, then loops over the results

Source: https://github.com/tensorflow/tensorflow/issues/44711
Style: keras-fit
Kind: negative: resembles predict() per item in a loop (LL501); predict runs once on all rows and only the numpy results are iterated
"""
import argparse
import csv

import numpy as np
import tensorflow as tf

CLASSES = ["ok", "warning", "failure"]


def load_sensor_table(path, rng, n=250_000, n_features=24):
    del path  # the production job reads a parquet export of the last day of readings
    machine_ids = [f"m{i:06d}" for i in range(n)]
    return machine_ids, rng.standard_normal((n, n_features)).astype(np.float32)


def write_alerts(path, machine_ids, probabilities, threshold):
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["machine_id", "status", "confidence"])
        for machine_id, probs in zip(machine_ids, probabilities):
            label = int(np.argmax(probs))
            if label != 0 and probs[label] >= threshold:
                writer.writerow([machine_id, CLASSES[label], f"{probs[label]:.3f}"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="models/failure_classifier.keras")
    parser.add_argument("--readings", default="readings.parquet")
    parser.add_argument("--threshold", type=float, default=0.8)
    args = parser.parse_args()

    model = tf.keras.models.load_model(args.model)
    machine_ids, features = load_sensor_table(args.readings, np.random.default_rng(0))
    probabilities = model.predict(features, batch_size=4096, verbose=0)  # one call, all rows
    write_alerts("alerts.csv", machine_ids, probabilities, args.threshold)
    print(f"scored {len(machine_ids)} machines")


if __name__ == "__main__":
    main()
