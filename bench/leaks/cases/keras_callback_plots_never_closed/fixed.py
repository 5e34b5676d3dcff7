"""Reconstruction-plot callback creates a matplotlib figure every epoch for the experiment logger and never closes it

Source: https://github.com/Clay-foundation/model/pull/158
Style: keras-callback
Kind: pyplot figure created every epoch in a callback and never closed: pyplot keeps every figure alive, ~16 MB per epoch after 100 epochs (report was a Lightning callback; rebuilt here as a Keras callback)
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import tensorflow as tf
import wandb


class ReconstructionPlots(tf.keras.callbacks.Callback):
    def __init__(self, samples, n_show=6):
        super().__init__()
        self.samples = samples[:n_show]

    def on_epoch_end(self, epoch, logs=None):
        reconstructions = self.model(self.samples, training=False).numpy()
        fig, axes = plt.subplots(2, len(self.samples), figsize=(3 * len(self.samples), 6))
        for column, (original, rebuilt) in enumerate(zip(self.samples, reconstructions)):
            axes[0, column].imshow(original[..., :3].clip(0, 1))
            axes[1, column].imshow(rebuilt[..., :3].clip(0, 1))
            axes[0, column].set_axis_off()
            axes[1, column].set_axis_off()
        fig.suptitle(f"epoch {epoch}")
        wandb.log({"reconstructions": wandb.Image(fig)}, step=epoch)
        plt.close(fig)  # wandb.Image has rendered it; pyplot must let it go


def build_autoencoder(size=64, bands=6):
    inputs = tf.keras.Input((size, size, bands))
    x = tf.keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(inputs)
    x = tf.keras.layers.Conv2D(64, 3, strides=2, padding="same", activation="relu")(x)
    x = tf.keras.layers.Conv2DTranspose(32, 3, strides=2, padding="same", activation="relu")(x)
    outputs = tf.keras.layers.Conv2DTranspose(bands, 3, strides=2, padding="same")(x)
    model = tf.keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="mse")
    return model


if __name__ == "__main__":
    wandb.init(project="satellite-mae", mode="offline")
    chips = np.random.default_rng(0).random((4096, 64, 64, 6), dtype=np.float32)
    model = build_autoencoder()
    model.fit(chips, chips, batch_size=64, epochs=500, callbacks=[ReconstructionPlots(chips)], verbose=0)
