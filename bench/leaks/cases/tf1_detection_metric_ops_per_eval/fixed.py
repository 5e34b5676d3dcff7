"""Periodic evaluation calls a get_*_metric_ops() helper each time, creating new streaming-metric ops and accumulators

Source: https://github.com/waymo-research/waymo-open-dataset/issues/314
Style: tf1-session
Kind: graph grows per evaluation: every call adds streaming-metric update ops plus new local accumulator variables (never reset, only replaced)
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

N_CLASSES = 4
EVAL_EVERY = 500


def make_eval_metric_ops(scores, labels):
    """Streaming AP-style metrics, built once under a scope so they can be reset as a group."""
    metrics = {}
    with tf.variable_scope("detection_metrics"):
        for cls in range(N_CLASSES):
            is_cls = tf.equal(labels, cls)
            metrics[f"auc/{cls}"] = tf.metrics.auc(is_cls, scores[:, cls], num_thresholds=200)
            metrics[f"recall/{cls}"] = tf.metrics.recall(is_cls, scores[:, cls] > 0.5)
    accumulators = tf.get_collection(tf.GraphKeys.LOCAL_VARIABLES, scope="detection_metrics")
    return metrics, tf.variables_initializer(accumulators)


def build_scorer(features):
    hidden = tf.layers.dense(features, 128, activation=tf.nn.relu)
    return tf.nn.softmax(tf.layers.dense(hidden, N_CLASSES))


def main(total_steps=100_000):
    rng = np.random.default_rng(8)
    features = tf.placeholder(tf.float32, [None, 32])
    labels = tf.placeholder(tf.int64, [None])
    scores = build_scorer(features)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, tf.math.log(scores + 1e-8))
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
    metric_ops, reset_metrics = make_eval_metric_ops(scores, labels)
    update_all = {k: update for k, (_, update) in metric_ops.items()}
    values_all = {k: value for k, (value, _) in metric_ops.items()}

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.graph.finalize()
        for step in range(total_steps):
            x = rng.standard_normal((128, 32)).astype(np.float32)
            y = rng.integers(0, N_CLASSES, 128)
            sess.run(train_op, {features: x, labels: y})
            if step % EVAL_EVERY == 0:
                sess.run(reset_metrics)  # fresh accumulators for this evaluation, same ops
                for _ in range(20):
                    xv = rng.standard_normal((256, 32)).astype(np.float32)
                    yv = rng.integers(0, N_CLASSES, 256)
                    sess.run(update_all, {features: xv, labels: yv})
                results = sess.run(values_all)
                print(step, {k: round(float(v), 3) for k, v in sorted(results.items())[:2]})


if __name__ == "__main__":
    main()
