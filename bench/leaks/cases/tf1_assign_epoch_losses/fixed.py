"""Landmark trainer writes epoch-average losses into variables with tf.assign inside the epoch loop

Source: https://github.com/guoqiangqi/PFLD/issues/70
Style: tf1-session
Kind: graph grows every epoch: assign ops (and their float constants) are created per epoch for the TensorBoard summaries
"""
import argparse

import numpy as np
import tensorflow as tf


def landmark_net(images, n_points=98):
    net = tf.layers.conv2d(images, 32, 3, strides=2, activation=tf.nn.relu6)
    net = tf.layers.conv2d(net, 64, 3, strides=2, activation=tf.nn.relu6)
    net = tf.reduce_mean(net, axis=[1, 2])
    return tf.layers.dense(net, n_points * 2)


def run_epoch(sess, ops, feeds_per_epoch):
    losses = []
    for feed in feeds_per_epoch:
        loss_value, _ = sess.run([ops["loss"], ops["train"]], feed_dict=feed)
        losses.append(loss_value)
    return float(np.mean(losses))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-epoch", type=int, default=1000)
    parser.add_argument("--log-dir", default="logs/pfld")
    args = parser.parse_args()
    rng = np.random.default_rng(1)

    images = tf.placeholder(tf.float32, [None, 112, 112, 3])
    landmarks = tf.placeholder(tf.float32, [None, 196])
    loss = tf.reduce_mean(tf.square(landmark_net(images) - landmarks))
    train_op = tf.train.AdamOptimizer(1e-4).minimize(loss)

    train_loss = tf.Variable(0.0, trainable=False)
    test_loss = tf.Variable(0.0, trainable=False)
    train_loss_in = tf.placeholder(tf.float32, [])
    test_loss_in = tf.placeholder(tf.float32, [])
    record_losses = tf.group(tf.assign(train_loss, train_loss_in), tf.assign(test_loss, test_loss_in))
    tf.summary.scalar("train_loss", train_loss)
    tf.summary.scalar("test_loss", test_loss)
    merged = tf.summary.merge_all()
    ops = {"loss": loss, "train": train_op}

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        writer = tf.summary.FileWriter(args.log_dir, sess.graph)
        sess.graph.finalize()
        for epoch in range(args.max_epoch):
            feeds = [
                {images: rng.random((32, 112, 112, 3), dtype=np.float32),
                 landmarks: rng.random((32, 196), dtype=np.float32)}
                for _ in range(20)
            ]
            epoch_train = run_epoch(sess, ops, feeds)
            epoch_test = float(sess.run(loss, feed_dict=feeds[0]))
            sess.run(record_losses, feed_dict={train_loss_in: epoch_train, test_loss_in: epoch_test})
            writer.add_summary(sess.run(merged), epoch)
            print(f"epoch {epoch}: train {epoch_train:.4f} test {epoch_test:.4f}")


if __name__ == "__main__":
    main()
