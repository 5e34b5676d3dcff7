"""TF1 trainer logs host-computed validation metrics by writing tf.Summary protocol buffers, not by building ops

Source: https://medium.com/@chadrick.kwag/lazy-summary-adding-in-tensorflow-ab424e6c44e4
Style: tf1-session
Kind: negative: resembles tf.assign / summary ops created per log step; a tf.Summary proto is plain Python data and adds nothing to the graph
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def build(n_features=64, n_classes=2):
    x = tf.placeholder(tf.float32, [None, n_features])
    y = tf.placeholder(tf.int64, [None])
    logits = tf.layers.dense(tf.layers.dense(x, 128, tf.nn.relu), n_classes)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
    train_summary = tf.summary.scalar("train/loss", loss)
    probs = tf.nn.softmax(logits)[:, 1]
    return x, y, loss, train_op, train_summary, probs


def auc(labels, scores):
    order = np.argsort(scores)
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    positives = labels == 1
    return (ranks[positives].sum() - positives.sum() * (positives.sum() + 1) / 2) / (positives.sum() * (~positives).sum())


def main(steps=20_000):
    rng = np.random.default_rng(0)
    x, y, loss, train_op, train_summary, probs = build()
    val_x = rng.standard_normal((5000, 64)).astype(np.float32)
    val_y = (val_x[:, 0] > 0).astype(np.int64)
    with tf.Session() as sess:
        writer = tf.summary.FileWriter("logs/tf1", sess.graph)
        sess.run(tf.global_variables_initializer())
        sess.graph.finalize()
        for step in range(steps):
            bx = rng.standard_normal((128, 64)).astype(np.float32)
            summary, _ = sess.run([train_summary, train_op], {x: bx, y: (bx[:, 0] > 0).astype(np.int64)})
            writer.add_summary(summary, step)
            if step % 500 == 0:
                val_auc = auc(val_y, sess.run(probs, {x: val_x}))
                proto = tf.Summary(value=[tf.Summary.Value(tag="val/auc", simple_value=val_auc)])
                writer.add_summary(proto, step)
        writer.close()


if __name__ == "__main__":
    main()
