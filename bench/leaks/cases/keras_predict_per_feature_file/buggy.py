"""Variable-star inference loops over feature files and runs model.predict() on each file's table

Source: https://github.com/scope-ml/scope-ml/pull/187
Style: keras-fit
Kind: Keras predict() per file in a loop: inference freezes partway through thousands of feature files as memory balloons
"""
import argparse
import glob
import os

import numpy as np
import pandas as pd
import tensorflow as tf

FEATURES = [f"f{i}" for i in range(40)]


def load_classifier(tag, path="models"):
    model = tf.keras.models.load_model(os.path.join(path, f"{tag}.h5"), compile=False)
    return model


def run_inference(tags, feature_dir, out_dir):
    models = {tag: load_classifier(tag) for tag in tags}
    os.makedirs(out_dir, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(feature_dir, "tile_*.parquet"))):
        table = pd.read_parquet(path)
        features = table[FEATURES].fillna(0.0).to_numpy(dtype=np.float32)
        scores = {}
        for tag, model in models.items():
            scores[f"{tag}_score"] = model.predict(features, verbose=0).ravel()  # leak: LL501
        pd.DataFrame({"_id": table["_id"], **scores}).to_parquet(os.path.join(out_dir, os.path.basename(path)))
        print(f"{os.path.basename(path)}: {len(table)} sources scored")


def parse_args():
    parser = argparse.ArgumentParser(description="Score every source of every field with each classifier.")
    parser.add_argument("--tags", nargs="+", default=["periodic", "eclipsing", "pulsator", "flare", "agn"])
    parser.add_argument("--feature-dir", default="features")
    parser.add_argument("--out-dir", default="preds")
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    run_inference(args.tags, args.feature_dir, args.out_dir)
