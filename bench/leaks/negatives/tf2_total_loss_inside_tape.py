"""Eager GAN step sums the discriminator losses inside the GradientTape block, as in the TF eager MNIST GAN example

Source: https://github.com/tensorflow/tensorflow/issues/21584
Style: tf2-loop
Kind: negative: resembles loss accumulation across iterations keeping a graph; the running total is a fresh tensor per step, recorded only by that step's tape, which gradient() releases
"""
import numpy as np
import tensorflow as tf


def make_generator():
    return tf.keras.Sequential([tf.keras.Input((100,)), tf.keras.layers.Dense(256, activation="relu"),
                                tf.keras.layers.Dense(784, activation="tanh")])


def make_discriminator():
    return tf.keras.Sequential([tf.keras.Input((784,)), tf.keras.layers.Dense(256, activation="relu"),
                                tf.keras.layers.Dense(1)])


def train_one_epoch(generator, discriminator, g_opt, d_opt, batches, rng):
    bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)
    epoch_d_losses = []
    for real in batches:
        noise = tf.constant(rng.standard_normal((real.shape[0], 100)), tf.float32)
        with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
            fake = generator(noise, training=True)
            real_logits = discriminator(real, training=True)
            fake_logits = discriminator(fake, training=True)
            total_discriminator_loss = bce(tf.ones_like(real_logits), real_logits)
            total_discriminator_loss += bce(tf.zeros_like(fake_logits), fake_logits)
            generator_loss = bce(tf.ones_like(fake_logits), fake_logits)
        d_grads = d_tape.gradient(total_discriminator_loss, discriminator.trainable_variables)
        g_grads = g_tape.gradient(generator_loss, generator.trainable_variables)
        d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
        g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
        epoch_d_losses.append(float(total_discriminator_loss))
    return float(np.mean(epoch_d_losses))


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    images = (rng.random((6000, 784), dtype=np.float32) * 2 - 1)
    batches = tf.data.Dataset.from_tensor_slices(images).shuffle(6000).batch(64)
    gen, disc = make_generator(), make_discriminator()
    g_opt, d_opt = tf.keras.optimizers.Adam(1e-4), tf.keras.optimizers.Adam(1e-4)
    for epoch in range(100):
        print(epoch, train_one_epoch(gen, disc, g_opt, d_opt, batches, rng))
