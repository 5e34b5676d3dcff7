"""Keras GAN trained by calling fit(epochs=1) on the discriminator and the stacked model for every batch

Source: https://github.com/tensorflow/tensorflow/issues/32954
Style: keras-fit
Kind: fit() called once per batch in a loop (family fit-per-batch): every fit() call builds its own data adapter, callbacks and training-loop state for a single batch, and host memory climbs batch after batch until the run crashes; clear_session() only slows it down
"""
import numpy as np
from tensorflow import keras

LATENT_DIM = 100
IMG_SHAPE = (28, 28, 1)


def build_generator():
    return keras.Sequential([
        keras.Input((LATENT_DIM,)),
        keras.layers.Dense(7 * 7 * 128), keras.layers.LeakyReLU(0.2),
        keras.layers.Reshape((7, 7, 128)),
        keras.layers.Conv2DTranspose(64, 4, strides=2, padding="same"), keras.layers.LeakyReLU(0.2),
        keras.layers.Conv2DTranspose(32, 4, strides=2, padding="same"), keras.layers.LeakyReLU(0.2),
        keras.layers.Conv2D(1, 7, padding="same", activation="tanh"),
    ], name="generator")


def build_discriminator():
    model = keras.Sequential([
        keras.Input(IMG_SHAPE),
        keras.layers.Conv2D(64, 3, strides=2, padding="same"), keras.layers.LeakyReLU(0.2),
        keras.layers.Conv2D(128, 3, strides=2, padding="same"), keras.layers.LeakyReLU(0.2),
        keras.layers.Flatten(), keras.layers.Dropout(0.3),
        keras.layers.Dense(1, activation="sigmoid"),
    ], name="discriminator")
    model.compile(optimizer=keras.optimizers.Adam(2e-4, 0.5), loss="binary_crossentropy")
    return model


def build_gan(generator, discriminator):
    discriminator.trainable = False
    z = keras.Input((LATENT_DIM,))
    gan = keras.Model(z, discriminator(generator(z)), name="gan")
    gan.compile(optimizer=keras.optimizers.Adam(2e-4, 0.5), loss="binary_crossentropy")
    return gan


def train(images, epochs=200, batch_size=128):
    generator, discriminator = build_generator(), build_discriminator()
    gan = build_gan(generator, discriminator)
    batches_per_epoch = len(images) // batch_size
    rng = np.random.default_rng(0)
    for epoch in range(epochs):
        rng.shuffle(images)
        for b in range(batches_per_epoch):
            real = images[b * batch_size:(b + 1) * batch_size]
            noise = rng.standard_normal((batch_size, LATENT_DIM)).astype("float32")
            fake = generator(noise, training=False).numpy()
            x = np.concatenate([real, fake])
            y = np.concatenate([np.full((batch_size, 1), 0.9), np.zeros((batch_size, 1))]).astype("float32")
            d_hist = discriminator.fit(x, y, batch_size=2 * batch_size, epochs=1, verbose=0)  # leak: new:fit-per-batch
            noise = rng.standard_normal((batch_size, LATENT_DIM)).astype("float32")
            g_hist = gan.fit(noise, np.ones((batch_size, 1), "float32"), batch_size=batch_size, epochs=1, verbose=0)  # leak: new:fit-per-batch
            d_loss, g_loss = d_hist.history["loss"][0], g_hist.history["loss"][0]
        print(f"epoch {epoch}: d_loss {d_loss:.4f} g_loss {g_loss:.4f}")
        if epoch % 10 == 0:
            generator.save_weights(f"generator_{epoch:03d}.weights.h5")


if __name__ == "__main__":
    (x_train, _), _ = keras.datasets.mnist.load_data()
    x_train = (x_train.astype("float32") - 127.5) / 127.5
    train(x_train[..., None])
