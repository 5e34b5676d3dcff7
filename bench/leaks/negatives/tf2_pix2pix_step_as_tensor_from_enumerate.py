"""pix2pix trained step by step in a TF2 loop: the tf.function train step gets the global step as a tensor from enumerate()

Source: https://www.tensorflow.org/tutorials/generative/pix2pix
Style: tf2-loop
Kind: negative: resembles a tf.function called with a changing Python number (LL505, retrace per value) and summaries written from inside the step; the step counter comes from Dataset.enumerate() as an int64 tensor, so every call matches the one trace, and the summary writer is created once
"""
import datetime

import tensorflow as tf

IMG = 256
LAMBDA = 100
STEPS = 40_000

loss_object = tf.keras.losses.BinaryCrossentropy(from_logits=True)


def conv_block(filters, transpose=False, norm=True):
    layer = tf.keras.layers.Conv2DTranspose if transpose else tf.keras.layers.Conv2D
    block = tf.keras.Sequential([layer(filters, 4, strides=2, padding="same", use_bias=not norm)])
    if norm:
        block.add(tf.keras.layers.BatchNormalization())
    block.add(tf.keras.layers.ReLU() if transpose else tf.keras.layers.LeakyReLU())
    return block


def unet():
    x = inputs = tf.keras.layers.Input([IMG, IMG, 3])
    skips = []
    for f, norm in [(64, False), (128, True), (256, True), (512, True), (512, True)]:
        x = conv_block(f, norm=norm)(x)
        skips.append(x)
    for f, skip in zip([512, 256, 128, 64], reversed(skips[:-1])):
        x = tf.keras.layers.Concatenate()([conv_block(f, transpose=True)(x), skip])
    return tf.keras.Model(inputs, tf.keras.layers.Conv2DTranspose(3, 4, 2, padding="same", activation="tanh")(x))


def patch_critic():
    a, b = tf.keras.layers.Input([IMG, IMG, 3]), tf.keras.layers.Input([IMG, IMG, 3])
    x = tf.keras.layers.concatenate([a, b])
    for f, norm in [(64, False), (128, True), (256, True)]:
        x = conv_block(f, norm=norm)(x)
    return tf.keras.Model([a, b], tf.keras.layers.Conv2D(1, 4, padding="same")(x))


generator, discriminator = unet(), patch_critic()
g_opt = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)
d_opt = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)
writer = tf.summary.create_file_writer("logs/fit/" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))


@tf.function
def train_step(input_image, target, step):
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        fake = generator(input_image, training=True)
        real_out = discriminator([input_image, target], training=True)
        fake_out = discriminator([input_image, fake], training=True)
        l1 = tf.reduce_mean(tf.abs(target - fake))
        g_total = loss_object(tf.ones_like(fake_out), fake_out) + LAMBDA * l1
        d_total = loss_object(tf.ones_like(real_out), real_out) + loss_object(tf.zeros_like(fake_out), fake_out)
    g_opt.apply_gradients(zip(g_tape.gradient(g_total, generator.trainable_variables), generator.trainable_variables))
    d_opt.apply_gradients(zip(d_tape.gradient(d_total, discriminator.trainable_variables),
                              discriminator.trainable_variables))
    with writer.as_default():
        tf.summary.scalar("gen_total_loss", g_total, step=step // 1000)
        tf.summary.scalar("gen_l1_loss", l1, step=step // 1000)
        tf.summary.scalar("disc_loss", d_total, step=step // 1000)


def fit(train_ds, steps):
    ckpt = tf.train.Checkpoint(generator=generator, discriminator=discriminator, g_opt=g_opt, d_opt=d_opt)
    for step, (input_image, target) in train_ds.repeat().take(steps).enumerate():
        train_step(input_image, target, step)
        if (step + 1) % 1000 == 0:
            tf.print("step", step + 1)
        if (step + 1) % 5000 == 0:
            ckpt.save("training_checkpoints/ckpt")


if __name__ == "__main__":
    images = tf.random.uniform([32, IMG, IMG, 3], -1.0, 1.0)
    fit(tf.data.Dataset.from_tensor_slices((images, tf.image.flip_left_right(images))).batch(1), STEPS)
