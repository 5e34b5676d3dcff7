"""Eager TF2 loop logging scalars and images with tf.summary every step through one writer created before the loop

Source: https://github.com/guochengqian/TENet/issues/12
Style: tf2-loop
Kind: negative: resembles summary ops or writers built per step (TF1 graph growth, writer per call); in TF2 eager mode tf.summary calls add no graph nodes and the writer exists once
"""
import numpy as np
import tensorflow as tf


class Logger:
    """Thin wrapper: one file writer for the whole run."""

    def __init__(self, log_dir):
        self.writer = tf.summary.create_file_writer(log_dir)

    def scalar(self, tag, value, step):
        with self.writer.as_default():
            tf.summary.scalar(tag, value, step=step)

    def images(self, tag, batch, step, max_outputs=4):
        with self.writer.as_default():
            tf.summary.image(tag, batch, step=step, max_outputs=max_outputs)

    def close(self):
        self.writer.close()


def main(steps=30_000):
    rng = np.random.default_rng(0)
    generator = tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(32 * 32 * 3, activation="sigmoid"),
                                     tf.keras.layers.Reshape((32, 32, 3))])
    optimizer = tf.keras.optimizers.Adam(2e-4)
    logger = Logger("logs/denoise")
    for step in range(steps):
        noise = tf.constant(rng.standard_normal((16, 64)), tf.float32)
        target = tf.constant(rng.random((16, 32, 32, 3)), tf.float32)
        with tf.GradientTape() as tape:
            images = generator(noise, training=True)
            loss = tf.reduce_mean(tf.abs(images - target))
        optimizer.apply_gradients(zip(tape.gradient(loss, generator.trainable_variables), generator.trainable_variables))
        logger.scalar("l1", loss, step)
        if step % 500 == 0:
            logger.images("samples", images, step)
    logger.close()


if __name__ == "__main__":
    main()
