"""TF1 training script builds every op (including the logging ops) before the session loop and finalizes the graph

Source: https://riptutorial.com/tensorflow/example/13426/use-graph-finalize---to-catch-nodes-being-added-to-the-graph
Style: tf1-session
Kind: negative: resembles ops created inside a session loop; the loop only feeds and fetches, and arithmetic on fetched values is numpy
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def build_graph(n_features, n_classes):
    features = tf.placeholder(tf.float32, [None, n_features], name="features")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    hidden = tf.layers.dense(features, 128, activation=tf.nn.relu)
    logits = tf.layers.dense(hidden, n_classes)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss, global_step=global_step)
    squared_loss = tf.square(loss)  # the extra diagnostic is part of the graph, not of the loop
    return {"features": features, "labels": labels, "loss": loss, "accuracy": accuracy,
            "train_op": train_op, "squared_loss": squared_loss, "global_step": global_step}


def main(steps=50_000):
    rng = np.random.default_rng(0)
    ops = build_graph(n_features=20, n_classes=5)
    init = tf.global_variables_initializer()
    saver = tf.train.Saver(max_to_keep=3)
    with tf.Session() as sess:
        sess.run(init)
        sess.graph.finalize()  # from here on, creating an op raises instead of leaking
        for step in range(steps):
            x = rng.standard_normal((256, 20)).astype(np.float32)
            y = rng.integers(0, 5, 256)
            feed = {ops["features"]: x, ops["labels"]: y}
            loss_value, acc, sq, _ = sess.run([ops["loss"], ops["accuracy"], ops["squared_loss"], ops["train_op"]], feed)
            doubled = loss_value * 2.0  # a numpy float, not a tensor: no new op
            if step % 1000 == 0:
                print(f"step {step}: loss {loss_value:.4f} (x2 {doubled:.4f}, sq {sq:.4f}) acc {acc:.3f}")
                saver.save(sess, "checkpoints/model", global_step=ops["global_step"])


if __name__ == "__main__":
    main()
