"""Denoising GAN standardises every batch with sess.run(tf.map_fn(...)) inside the training loop

Source: https://github.com/manumathewthomas/ImageDenoisingGAN/issues/5
Style: tf1-session
Kind: graph grows every step: two map_fn/per_image_standardization sub-graphs (embedding the batch as a constant) per iteration, until the GraphDef passes 2 GB at checkpoint time
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

BATCH, SIZE = 16, 128


def generator(x, reuse=False):
    with tf.variable_scope("generator", reuse=reuse):
        h = tf.layers.conv2d(x, 32, 9, padding="same", activation=tf.nn.relu)
        for i in range(3):
            h = h + tf.layers.conv2d(tf.layers.conv2d(h, 32, 3, padding="same", activation=tf.nn.relu), 32, 3, padding="same")
        return tf.nn.tanh(tf.layers.conv2d(h, 3, 9, padding="same"))


def discriminator(x, reuse=False):
    with tf.variable_scope("discriminator", reuse=reuse):
        h = tf.layers.conv2d(x, 48, 4, 2, padding="same", activation=tf.nn.leaky_relu)
        h = tf.layers.conv2d(h, 96, 4, 2, padding="same", activation=tf.nn.leaky_relu)
        return tf.layers.dense(tf.layers.flatten(h), 1)


def load_batch(rng):
    clean = rng.random((BATCH, SIZE, SIZE, 3), dtype=np.float32)
    noisy = np.clip(clean + 0.1 * rng.standard_normal(clean.shape).astype(np.float32), 0, 1)
    return noisy, clean


def standardize(batch):
    mean = batch.mean(axis=(1, 2, 3), keepdims=True)
    std = np.maximum(batch.std(axis=(1, 2, 3), keepdims=True), 1.0 / np.sqrt(batch[0].size))
    return (batch - mean) / std


def train(iterations=100_000):
    noisy_in = tf.placeholder(tf.float32, [BATCH, SIZE, SIZE, 3])
    clean_in = tf.placeholder(tf.float32, [BATCH, SIZE, SIZE, 3])
    fake = generator(noisy_in)
    d_real, d_fake = discriminator(clean_in), discriminator(fake, reuse=True)
    d_loss = tf.reduce_mean(tf.nn.softplus(-d_real) + tf.nn.softplus(d_fake))
    g_loss = tf.reduce_mean(tf.nn.softplus(-d_fake)) + 100 * tf.reduce_mean(tf.abs(fake - clean_in))
    g_vars = tf.trainable_variables("generator")
    d_vars = tf.trainable_variables("discriminator")
    d_step = tf.train.AdamOptimizer(2e-4, 0.5).minimize(d_loss, var_list=d_vars)
    g_step = tf.train.AdamOptimizer(2e-4, 0.5).minimize(g_loss, var_list=g_vars)
    saver = tf.train.Saver()
    rng = np.random.default_rng(0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for it in range(iterations):
            training_batch, groundtruth_batch = load_batch(rng)
            training_batch = standardize(training_batch)
            groundtruth_batch = standardize(groundtruth_batch)
            feed = {noisy_in: training_batch, clean_in: groundtruth_batch}
            _, dl = sess.run([d_step, d_loss], feed)
            _, gl = sess.run([g_step, g_loss], feed)
            if it % 500 == 0:
                print(f"iter {it}: d {dl:.4f} g {gl:.4f}")
                saver.save(sess, "checkpoints/denoise", global_step=it)


if __name__ == "__main__":
    train()
