"""Batch scoring service that builds its small TF1 graph inside a fresh tf.Graph for every job and closes the session afterwards

Source: https://github.com/tensorflow/tensorflow/issues/700
Style: tf1-session
Kind: negative: resembles graph ops (placeholders, matmul, softmax) created inside a loop that runs a session; each job's ops go into their own tf.Graph that is dropped with the job, so the default graph never grows
"""
import time

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

FEATURES = 64
CLASSES = 5


def load_weights(job_id):
    rng = np.random.default_rng(job_id)
    return {
        "w": rng.standard_normal((FEATURES, CLASSES)).astype(np.float32),
        "b": rng.standard_normal(CLASSES).astype(np.float32),
        "temperature": float(rng.uniform(0.5, 2.0)),
    }


def score_job(job_id, rows):
    weights = load_weights(job_id)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, FEATURES], name="x")
        w = tf.constant(weights["w"])
        b = tf.constant(weights["b"])
        logits = (tf.matmul(x, w) + b) / weights["temperature"]
        probs = tf.nn.softmax(logits)
        top = tf.argmax(probs, axis=1)
        with tf.Session() as sess:
            p, t = sess.run([probs, top], feed_dict={x: rows})
    return p.max(axis=1).mean(), np.bincount(t, minlength=CLASSES)


def serve(num_jobs=100000):
    rng = np.random.default_rng(0)
    for job_id in range(num_jobs):
        start = time.perf_counter()
        rows = rng.standard_normal((256, FEATURES)).astype(np.float32)
        confidence, histogram = score_job(job_id, rows)
        if job_id % 1000 == 0:
            elapsed = 1000 * (time.perf_counter() - start)
            nodes = len(tf.get_default_graph().as_graph_def().node)
            print(f"job {job_id}: confidence {confidence:.3f} classes {histogram.tolist()} "
                  f"({elapsed:.1f} ms, default graph nodes {nodes})")


if __name__ == "__main__":
    serve()
