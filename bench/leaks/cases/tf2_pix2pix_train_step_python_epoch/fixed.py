"""pix2pix in a TF2 custom loop: the tf.function train step receives the Python epoch number for its summaries

Source: https://github.com/solaris33/deep-learning-tensorflow-book-code/issues/8
Style: tf2-loop
Kind: tf.function retraces on a Python argument: `epoch` is a Python int passed to the @tf.function train step (used as the summary step), so every new epoch traces and keeps a new concrete graph of the whole generator/discriminator update
"""
import datetime

import tensorflow as tf

IMG = 256
LAMBDA = 100
EPOCHS = 150

bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)


def down(filters, size, norm=True):
    block = tf.keras.Sequential([tf.keras.layers.Conv2D(filters, size, 2, padding="same", use_bias=False)])
    if norm:
        block.add(tf.keras.layers.BatchNormalization())
    block.add(tf.keras.layers.LeakyReLU())
    return block


def up(filters, size, dropout=False):
    block = tf.keras.Sequential([tf.keras.layers.Conv2DTranspose(filters, size, 2, padding="same", use_bias=False),
                                 tf.keras.layers.BatchNormalization()])
    if dropout:
        block.add(tf.keras.layers.Dropout(0.5))
    block.add(tf.keras.layers.ReLU())
    return block


def make_generator():
    inputs = tf.keras.layers.Input([IMG, IMG, 3])
    downs = [down(64, 4, False), down(128, 4), down(256, 4), down(512, 4), down(512, 4), down(512, 4)]
    ups = [up(512, 4, True), up(512, 4, True), up(256, 4), up(128, 4), up(64, 4)]
    x, skips = inputs, []
    for d in downs:
        x = d(x)
        skips.append(x)
    for u, skip in zip(ups, reversed(skips[:-1])):
        x = tf.keras.layers.Concatenate()([u(x), skip])
    out = tf.keras.layers.Conv2DTranspose(3, 4, 2, padding="same", activation="tanh")(x)
    return tf.keras.Model(inputs, out)


def make_discriminator():
    inp = tf.keras.layers.Input([IMG, IMG, 3])
    tar = tf.keras.layers.Input([IMG, IMG, 3])
    x = tf.keras.layers.concatenate([inp, tar])
    x = down(128, 4)(down(64, 4, False)(x))
    x = tf.keras.layers.LeakyReLU()(tf.keras.layers.Conv2D(256, 4, padding="same")(x))
    return tf.keras.Model([inp, tar], tf.keras.layers.Conv2D(1, 4, padding="same")(x))


@tf.function
def train_step(input_image, target, epoch, generator, discriminator, g_opt, d_opt, writer):
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        fake = generator(input_image, training=True)
        real_logits = discriminator([input_image, target], training=True)
        fake_logits = discriminator([input_image, fake], training=True)
        gan_loss = bce(tf.ones_like(fake_logits), fake_logits)
        l1_loss = tf.reduce_mean(tf.abs(target - fake))
        g_loss = gan_loss + LAMBDA * l1_loss
        d_loss = bce(tf.ones_like(real_logits), real_logits) + bce(tf.zeros_like(fake_logits), fake_logits)
    g_opt.apply_gradients(zip(g_tape.gradient(g_loss, generator.trainable_variables), generator.trainable_variables))
    d_opt.apply_gradients(zip(d_tape.gradient(d_loss, discriminator.trainable_variables), discriminator.trainable_variables))
    with writer.as_default():
        tf.summary.scalar("gen_total_loss", g_loss, step=epoch)
        tf.summary.scalar("gen_l1_loss", l1_loss, step=epoch)
        tf.summary.scalar("disc_loss", d_loss, step=epoch)


def fit(train_ds):
    generator, discriminator = make_generator(), make_discriminator()
    g_opt = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)
    d_opt = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)
    ckpt = tf.train.Checkpoint(generator=generator, discriminator=discriminator, g_opt=g_opt, d_opt=d_opt)
    writer = tf.summary.create_file_writer("logs/fit/" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    for epoch in range(EPOCHS):
        for n, (input_image, target) in train_ds.enumerate():
            train_step(input_image, target, tf.constant(epoch, dtype=tf.int64), generator, discriminator, g_opt, d_opt, writer)
            if (n + 1) % 100 == 0:
                tf.print("epoch", epoch, "batch", n + 1)
        if (epoch + 1) % 20 == 0:
            ckpt.save("training_checkpoints/ckpt")


if __name__ == "__main__":
    images = tf.random.uniform([64, IMG, IMG, 3], -1.0, 1.0)
    targets = tf.random.uniform([64, IMG, IMG, 3], -1.0, 1.0)
    fit(tf.data.Dataset.from_tensor_slices((images, targets)).shuffle(64).batch(1))
