"""Prediction service calls model.predict() on each incoming request's single feature vector

Source: https://github.com/tensorflow/tensorflow/issues/33030
Style: keras-fit
Kind: Keras predict() per request: the server's memory grows with every prediction request until it is restarted
"""
import json
import sys

import numpy as np
import tensorflow as tf

FEATURE_ORDER = ["age", "income", "tenure", "n_products", "balance", "is_active"]

model = tf.keras.models.load_model("churn_model.keras")


def to_features(payload):
    return np.array([[float(payload.get(name, 0.0)) for name in FEATURE_ORDER]], dtype=np.float32)


def predict_churn(payload):
    features = to_features(payload)
    probability = model.predict(features, verbose=0)[0, 0]  # leak: LL501
    return {"customer_id": payload.get("customer_id"), "churn_probability": float(probability)}


def serve(stream, out):
    """One JSON request per line, one JSON answer per line (stands in for the HTTP handler)."""
    for line in stream:
        line = line.strip()
        if not line:
            continue
        try:
            answer = predict_churn(json.loads(line))
        except (ValueError, KeyError) as error:
            answer = {"error": str(error)}
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    serve(sys.stdin, sys.stdout)
