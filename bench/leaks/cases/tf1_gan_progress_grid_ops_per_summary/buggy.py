"""Unpaired face-translation GAN saves a progress grid by building clip/concat ops in the session graph at every summary

Source: https://github.com/david-gpu/deep-makeover/issues/3
Style: tf1-session
Kind: graph grows every summary: the grid helper turns the fetched numpy batches into graph constants (clip and concat ops holding whole image batches) and runs them, so the default graph gains a few batches of images per summary; after hours of training the checkpoint's meta graph passes 2 GB ("GraphDef cannot be larger than 2GB") and saving fails
"""
import os
import time

import numpy as np
import tensorflow.compat.v1 as tf
from PIL import Image

tf.disable_v2_behavior()

IMG = 80
BATCH = 16
SUMMARY_EVERY = 20


def generator(x, reuse=False):
    with tf.variable_scope("gen", reuse=reuse):
        h = tf.layers.conv2d(x, 64, 5, padding="same", activation=tf.nn.relu)
        h = tf.layers.conv2d(h, 64, 3, padding="same", activation=tf.nn.relu)
        return tf.nn.sigmoid(tf.layers.conv2d(h, 3, 5, padding="same"))


def discriminator(x, reuse=False):
    with tf.variable_scope("disc", reuse=reuse):
        h = tf.layers.conv2d(x, 64, 4, strides=2, activation=tf.nn.leaky_relu)
        h = tf.layers.conv2d(h, 128, 4, strides=2, activation=tf.nn.leaky_relu)
        return tf.layers.dense(tf.layers.flatten(h), 1)


def save_progress_grid(sess, sources, outputs, step, out_dir, columns=4):
    clipped = tf.maximum(tf.minimum(outputs, 1.0), 0.0)  # leak: LL504
    pairs = tf.concat([sources, clipped], 2)  # leak: LL504
    per_col = BATCH // columns
    cols = [tf.concat([pairs[c * per_col + i] for i in range(per_col)], 0) for c in range(columns)]  # leak: LL504
    grid = sess.run(tf.concat(cols, 1))  # leak: LL504
    Image.fromarray((grid * 255).astype(np.uint8)).save(os.path.join(out_dir, f"step{step:06d}.png"))


def train(train_minutes=12 * 60, out_dir="train_out", ckpt_dir="checkpoints"):
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(ckpt_dir, exist_ok=True)
    source = tf.random_uniform([BATCH, IMG, IMG, 3])
    target = tf.random_uniform([BATCH, IMG, IMG, 3])
    fake = generator(source)
    d_real, d_fake = discriminator(target), discriminator(fake, reuse=True)
    bce = tf.nn.sigmoid_cross_entropy_with_logits
    d_loss = tf.reduce_mean(bce(labels=tf.ones_like(d_real), logits=d_real) + bce(labels=tf.zeros_like(d_fake), logits=d_fake))
    g_loss = tf.reduce_mean(bce(labels=tf.ones_like(d_fake), logits=d_fake)) + 0.1 * tf.reduce_mean(tf.abs(fake - source))
    d_opt = tf.train.AdamOptimizer(2e-4, 0.5).minimize(d_loss, var_list=tf.trainable_variables("disc"))
    g_opt = tf.train.AdamOptimizer(2e-4, 0.5).minimize(g_loss, var_list=tf.trainable_variables("gen"))
    saver = tf.train.Saver()

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        start, step = time.time(), 0
        while (time.time() - start) / 60 < train_minutes:
            if step % SUMMARY_EVERY == 0:
                src_batch, out_batch = sess.run([source, fake])
                save_progress_grid(sess, src_batch, out_batch, step, out_dir)
            for _ in range(3):
                sess.run(d_opt)
            _, gl, dl = sess.run([g_opt, g_loss, d_loss])
            print(f"step {step}: gen {gl:.3f} disc {dl:.3f}")
            step += 1
        saver.save(sess, os.path.join(ckpt_dir, "makeover"))


if __name__ == "__main__":
    train()
