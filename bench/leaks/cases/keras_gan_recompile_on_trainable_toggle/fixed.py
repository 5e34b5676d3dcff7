"""Keras GAN that flips the discriminator's trainable flag and recompiles both models on every iteration

Source: https://github.com/keras-team/keras/issues/6457
Style: keras-fit
Kind: Keras global state grows with every compile() in the loop: each iteration compiles the discriminator and the stacked GAN again (new optimizer state, metrics and training function per compile), so compile time and memory increase iteration after iteration; the maintainer's answer is to save the weights, clear_session(), rebuild and reload instead of compiling in the loop
"""
import numpy as np
from tensorflow import keras

LATENT = 64


def build_generator():
    return keras.Sequential([
        keras.Input((LATENT,)),
        keras.layers.Dense(7 * 7 * 64, activation="relu"),
        keras.layers.Reshape((7, 7, 64)),
        keras.layers.Conv2DTranspose(64, 4, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2DTranspose(32, 4, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(1, 5, padding="same", activation="tanh"),
    ], name="generator")


def build_discriminator():
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        keras.layers.Conv2D(32, 3, strides=2, padding="same"), keras.layers.LeakyReLU(0.2),
        keras.layers.Conv2D(64, 3, strides=2, padding="same"), keras.layers.LeakyReLU(0.2),
        keras.layers.Flatten(),
        keras.layers.Dense(1, activation="sigmoid"),
    ], name="discriminator")


def build_gan(generator, discriminator):
    z = keras.Input((LATENT,))
    return keras.Model(z, discriminator(generator(z)), name="gan")


def make_trainable(net, value):
    net.trainable = value
    for layer in net.layers:
        layer.trainable = value


def rebuild_from_disk(generator, discriminator):
    generator.save_weights("generator.weights.h5")
    discriminator.save_weights("discriminator.weights.h5")
    keras.backend.clear_session()
    generator, discriminator = build_generator(), build_discriminator()
    generator.load_weights("generator.weights.h5")
    discriminator.load_weights("discriminator.weights.h5")
    return generator, discriminator, build_gan(generator, discriminator)


def train(images, iterations=20000, batch_size=64):
    generator, discriminator = build_generator(), build_discriminator()
    gan = build_gan(generator, discriminator)
    rng = np.random.default_rng(0)
    for it in range(iterations):
        if it > 0:
            generator, discriminator, gan = rebuild_from_disk(generator, discriminator)
        real = images[rng.integers(0, len(images), batch_size)]
        noise = rng.normal(size=(batch_size, LATENT)).astype("float32")
        fake = generator.predict_on_batch(noise)

        make_trainable(discriminator, True)
        discriminator.compile(optimizer=keras.optimizers.Adam(2e-4, 0.5), loss="binary_crossentropy")
        x = np.concatenate([real, fake])
        y = np.concatenate([np.ones((batch_size, 1)), np.zeros((batch_size, 1))]).astype("float32")
        d_loss = discriminator.train_on_batch(x, y)

        make_trainable(discriminator, False)
        gan.compile(optimizer=keras.optimizers.Adam(2e-4, 0.5), loss="binary_crossentropy")
        g_loss = gan.train_on_batch(noise, np.ones((batch_size, 1), "float32"))

        if it % 500 == 0:
            print(f"iteration {it}: d_loss {float(d_loss):.4f} g_loss {float(g_loss):.4f}")
    return generator


if __name__ == "__main__":
    (x_train, _), _ = keras.datasets.mnist.load_data()
    train(((x_train.astype("float32") - 127.5) / 127.5)[..., None])
