"""Retention-time predictor splits peptides into chunks and calls model.predict() per chunk

Source: https://github.com/CompOmics/DeepLC/pull/60
Style: keras-fit
Kind: Keras predict() per batch in a loop: memory grows with every chunk of a long prediction run
"""
import argparse

import numpy as np
import tensorflow as tf

AA = "ACDEFGHIKLMNPQRSTVWY"
MAX_LEN = 60


def encode(peptides):
    matrix = np.zeros((len(peptides), MAX_LEN, len(AA)), dtype=np.float32)
    for row, peptide in enumerate(peptides):
        for col, residue in enumerate(peptide[:MAX_LEN]):
            matrix[row, col, AA.index(residue)] = 1.0
    return matrix


def load_peptides(path, rng, n=1_000_000):
    del path  # the real tool reads a CSV of sequences and modifications
    lengths = rng.integers(7, 40, n)
    return ["".join(rng.choice(list(AA), size=k)) for k in lengths]


def predict_retention(model, peptides, chunk_size):
    predictions = []
    for start in range(0, len(peptides), chunk_size):
        features = encode(peptides[start:start + chunk_size])
        predictions.append(model.predict(features, batch_size=1024, verbose=0).ravel())  # leak: LL501
    return np.concatenate(predictions)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="models/rt_cnn.hdf5")
    parser.add_argument("--peptides", default="peptides.csv")
    parser.add_argument("--chunk-size", type=int, default=10_000)
    args = parser.parse_args()
    model = tf.keras.models.load_model(args.model, compile=False)
    peptides = load_peptides(args.peptides, np.random.default_rng(0))
    retention = predict_retention(model, peptides, args.chunk_size)
    np.savetxt("retention_times.csv", retention, delimiter=",")


if __name__ == "__main__":
    main()
