"""Inference loop over feature files that calls the Keras model directly, model(x, training=False), per file

Source: https://github.com/scope-ml/scope-ml/pull/187
Style: keras-fit
Kind: negative: resembles Keras predict() in a loop (LL501); the loop calls the model itself, which is the documented replacement
"""
import argparse
import glob
import os

import numpy as np
import pandas as pd
import tensorflow as tf

FEATURE_COLUMNS = [f"feature_{i}" for i in range(32)]


def load_models(model_dir):
    return {
        os.path.splitext(os.path.basename(path))[0]: tf.keras.models.load_model(path, compile=False)
        for path in sorted(glob.glob(os.path.join(model_dir, "*.keras")))
    }


def score_tables(models, table_paths, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for path in table_paths:
        table = pd.read_parquet(path)
        features = tf.convert_to_tensor(table[FEATURE_COLUMNS].fillna(0).to_numpy(np.float32))
        result = pd.DataFrame({"object_id": table["object_id"]})
        for name, model in models.items():
            result[name] = model(features, training=False).numpy().ravel()
        result.to_parquet(os.path.join(out_dir, os.path.basename(path)))
        print(f"{path}: {len(result)} rows scored by {len(models)} models")


def parse_args():
    parser = argparse.ArgumentParser(description="Score every feature table with every saved classifier.")
    parser.add_argument("--model-dir", default="classifiers")
    parser.add_argument("--features", default="features/*.parquet")
    parser.add_argument("--out-dir", default="scores")
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    score_tables(load_models(args.model_dir), sorted(glob.glob(args.features)), args.out_dir)
