"""Training step reads each image with tf.read_file/tf.image.decode_image built inside the helper

Source: https://github.com/tensorflow/tensorflow/issues/9471
Style: tf1-session
Kind: graph grows per sample: ReadFile and DecodeImage ops are added every time get_image() runs, so steps get slower and slower
"""
import glob
import time

import numpy as np
import tensorflow as tf

CHANNELS = 3
BATCH_SIZE = 16


class ImageReader:
    """The read/decode ops exist once; each call only feeds a new path."""

    def __init__(self):
        self.path_in = tf.placeholder(tf.string, [])
        self.image_op = tf.image.decode_image(tf.read_file(self.path_in), channels=CHANNELS)

    def __call__(self, image_path):
        return tf.get_default_session().run(self.image_op, feed_dict={self.path_in: image_path})


def build_model():
    images = tf.placeholder(tf.float32, [None, 64, 64, CHANNELS])
    labels = tf.placeholder(tf.int64, [None])
    net = tf.layers.conv2d(images, 32, 3, activation=tf.nn.relu)
    logits = tf.layers.dense(tf.reduce_mean(net, axis=[1, 2]), 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    return images, labels, loss, tf.train.AdamOptimizer(1e-3).minimize(loss)


def main():
    paths = sorted(glob.glob("samples/*.jpg"))
    rng = np.random.default_rng(2)
    images, labels, loss, train_op = build_model()
    read_sample = ImageReader()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.graph.finalize()
        for step in range(10_000):
            batch_paths = rng.choice(paths, BATCH_SIZE)
            started = time.time()
            batch = np.stack([read_sample(p)[:64, :64] for p in batch_paths]).astype(np.float32) / 255.0
            read_time = time.time() - started
            batch_labels = np.array([("dog" in p) for p in batch_paths], dtype=np.int64)
            loss_value, _ = sess.run([loss, train_op], feed_dict={images: batch, labels: batch_labels})
            if step % 50 == 0:
                print(f"step {step}: loss {loss_value:.3f}, reading took {read_time:.2f}s")


if __name__ == "__main__":
    main()
