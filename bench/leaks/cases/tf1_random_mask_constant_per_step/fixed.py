"""A fresh random sparsity mask is wrapped in tf.constant (and its op) on every training step

Source: https://github.com/uber-research/sbnet/issues/7
Style: tf1-session
Kind: graph grows every step: tf.constant(mask) and the mask-reduction op are rebuilt per iteration, each embedding the mask
"""
import time

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

BATCH = 50
HEIGHT = WIDTH = 28
BLOCK = 5


def random_mask(rng, keep_fraction):
    return (rng.random((BATCH, HEIGHT, WIDTH, 1)) < keep_fraction).astype(np.float32)


def active_blocks(mask):
    """Which BLOCK x BLOCK tiles contain any active pixel (a pooling stands in for the custom op)."""
    pooled = tf.nn.max_pool2d(mask, ksize=BLOCK, strides=BLOCK, padding="VALID")
    return tf.where(pooled > 0.0)


def main(steps=2000, keep_fraction=0.1):
    rng = np.random.default_rng(0)
    images = tf.placeholder(tf.float32, [BATCH, HEIGHT, WIDTH, 1])
    mask = tf.placeholder(tf.float32, [BATCH, HEIGHT, WIDTH, 1])  # fed, not embedded
    blocks = active_blocks(mask)
    conv = tf.layers.conv2d(images, 16, BLOCK, padding="same")
    loss = tf.reduce_mean(tf.square(conv))
    train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.graph.finalize()
        started = time.time()
        for step in range(steps):
            mask_value = random_mask(rng, keep_fraction)
            batch = rng.random((BATCH, HEIGHT, WIDTH, 1)).astype(np.float32) * mask_value
            indices, _ = sess.run([blocks, train_op], feed_dict={images: batch, mask: mask_value})
            if step % 100 == 0:
                print(f"step {step}: {len(indices)} active blocks, {time.time() - started:.1f}s")
                started = time.time()


if __name__ == "__main__":
    main()
