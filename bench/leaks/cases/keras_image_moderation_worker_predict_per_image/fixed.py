"""Long-running image moderation worker: a Keras MobileNet classifier's predict() is called once per uploaded image

Source: https://github.com/GantMan/nsfw_model/pull/125
Style: keras-fit
Kind: Keras predict() called on one item per loop iteration: the worker classifies each image from the queue with model.predict, which sets up a new data adapter and predict function state per call; host memory keeps growing in the long-running process (fixed by calling the model directly)
"""
import json
import time
from pathlib import Path

import numpy as np
import tensorflow as tf

IMAGE_DIM = 224
CATEGORIES = ["drawings", "hentai", "neutral", "porn", "sexy"]


def load_model(path):
    return tf.keras.models.load_model(path, compile=False)


def load_images(paths, image_dim=IMAGE_DIM):
    arrays = []
    for p in paths:
        img = tf.keras.utils.load_img(p, target_size=(image_dim, image_dim))
        arrays.append(tf.keras.utils.img_to_array(img) / 255.0)
    return np.asarray(arrays, dtype=np.float32)


def classify_nd(model, nd_images):
    model_preds = model(nd_images, training=False).numpy()
    results = []
    for single in model_preds:
        results.append({CATEGORIES[i]: float(p) for i, p in enumerate(single)})
    return results


def moderate(result, threshold=0.7):
    unsafe = result["porn"] + result["hentai"] + 0.5 * result["sexy"]
    return "reject" if unsafe >= threshold else "accept"


def run_worker(model_path, inbox, outbox, poll_seconds=0.5):
    model = load_model(model_path)
    inbox, outbox = Path(inbox), Path(outbox)
    outbox.mkdir(parents=True, exist_ok=True)
    processed = 0
    while True:
        pending = sorted(inbox.glob("*.jpg"))
        if not pending:
            time.sleep(poll_seconds)
            continue
        for path in pending:
            result = classify_nd(model, load_images([path]))[0]
            decision = moderate(result)
            (outbox / f"{path.stem}.json").write_text(json.dumps({"scores": result, "decision": decision}))
            path.unlink()
            processed += 1
            if processed % 1000 == 0:
                print(f"{processed} images moderated")


if __name__ == "__main__":
    run_worker("nsfw_mobilenet2.224x224.h5", "/srv/uploads/incoming", "/srv/uploads/decisions")
