"""Indexing a pipeline tensor inside sess.run() adds a strided_slice op every step

Source: https://github.com/tensorflow/tensorflow/issues/7127
Style: tf1-session
Kind: graph grows every step: `epoch_t[0]` builds a new StridedSlice op in the default graph on each run
"""
import argparse

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def make_input_pipeline(images, labels, batch_size, num_epochs):
    """Queue-style pipeline that also reports which epoch each batch belongs to."""
    dataset = tf.data.Dataset.from_tensor_slices((images, labels))
    dataset = dataset.repeat(num_epochs).batch(batch_size, drop_remainder=True)
    steps_per_epoch = len(images) // batch_size
    dataset = dataset.enumerate().map(
        lambda i, xy: (tf.fill([batch_size], i // steps_per_epoch), xy[0], xy[1])
    )
    epoch, image_batch, label_batch = tf.data.make_one_shot_iterator(dataset).get_next()
    return epoch, image_batch, label_batch


def build_classifier(image_batch, label_batch, num_classes):
    flat = tf.layers.flatten(image_batch)
    hidden = tf.layers.dense(flat, 128, activation=tf.nn.relu)
    logits = tf.layers.dense(hidden, num_classes)
    loss = tf.losses.sparse_softmax_cross_entropy(label_batch, logits)
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
    return loss, train_op


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    images = rng.random((2048, 28, 28, 1), dtype=np.float32)
    labels = rng.integers(0, 10, size=2048).astype(np.int64)

    epoch_ids, image_batch, label_batch = make_input_pipeline(images, labels, args.batch_size, args.epochs)
    loss, train_op = build_classifier(image_batch, label_batch, num_classes=10)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        step = 0
        while True:
            try:
                epoch, loss_value, _ = sess.run([epoch_ids[0], loss, train_op])  # leak: new:tf1-graph-growth
            except tf.errors.OutOfRangeError:
                break
            if step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {loss_value:.4f}")
            step += 1


if __name__ == "__main__":
    main()
