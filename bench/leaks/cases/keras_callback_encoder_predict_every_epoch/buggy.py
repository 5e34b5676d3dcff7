"""A callback encodes a probe set with encoder.predict() at the end of every epoch; GPU memory explodes after ~100 epochs

Source: https://github.com/keras-team/keras/issues/8668
Style: keras-callback
Kind: Keras predict() called once per epoch from a callback (the fit loop is the loop): every call leaves memory behind
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers


def build_autoencoder(input_dim=784, latent=32):
    inp = keras.Input(shape=(input_dim,))
    h = layers.Dense(256, activation="relu")(inp)
    z = layers.Dense(latent, name="code")(h)
    encoder = keras.Model(inp, z, name="encoder")
    dec_in = keras.Input(shape=(latent,))
    out = layers.Dense(input_dim, activation="sigmoid")(layers.Dense(256, activation="relu")(dec_in))
    decoder = keras.Model(dec_in, out, name="decoder")
    auto = keras.Model(inp, decoder(encoder(inp)))
    auto.compile(optimizer="adam", loss="binary_crossentropy")
    return auto, encoder


class LatentDriftMonitor(keras.callbacks.Callback):
    """Tracks how far the codes of a fixed probe set move from one epoch to the next."""

    def __init__(self, encoder, probe):
        super().__init__()
        self.encoder, self.probe = encoder, probe
        self.previous = None
        self.drift = []

    def on_epoch_end(self, epoch, logs=None):
        codes = self.encoder.predict(self.probe)  # leak: LL501
        if self.previous is not None:
            self.drift.append(float(np.linalg.norm(codes - self.previous, axis=1).mean()))
            print(f" - latent drift {self.drift[-1]:.4f}")
        self.previous = codes


if __name__ == "__main__":
    (x_train, _), (x_test, _) = keras.datasets.mnist.load_data()
    x_train = x_train.reshape(-1, 784).astype("float32") / 255
    x_test = x_test.reshape(-1, 784).astype("float32") / 255
    autoencoder, encoder = build_autoencoder()
    monitor = LatentDriftMonitor(encoder, x_test[:512])
    autoencoder.fit(x_train, x_train, epochs=300, batch_size=256, callbacks=[monitor], verbose=2)
    np.save("latent_drift.npy", np.array(monitor.drift))
