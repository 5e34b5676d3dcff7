"""Keras callback that keeps the best weights and a per-epoch validation history, and logs a sample grid through one file writer

Source: https://www.tensorflow.org/guide/keras/custom_callback
Style: keras-callback
Kind: negative: resembles a callback keeping per-epoch model outputs on itself (LL507) and a summary writer created per call (writer-per-call); the history holds one Python float per epoch from `logs`, the best weights are replaced (not appended) when the loss improves, the writer is created once in `on_train_begin` and closed in `on_train_end`, and the sample grid is a direct model call on a fixed 16-image batch
"""
import numpy as np
import tensorflow as tf


class BestWeightsWithSamples(tf.keras.callbacks.Callback):
    def __init__(self, sample_images, logdir="logs/samples", patience=5):
        super().__init__()
        self.sample_images = tf.constant(sample_images[:16])
        self.logdir = logdir
        self.patience = patience
        self.history = []
        self.best_loss = np.inf
        self.best_weights = None
        self.wait = 0
        self.writer = None

    def on_train_begin(self, logs=None):
        self.writer = tf.summary.create_file_writer(self.logdir)
        self.history = []
        self.best_loss, self.best_weights, self.wait = np.inf, None, 0

    def on_epoch_end(self, epoch, logs=None):
        val_loss = float(logs["val_loss"])
        self.history.append(val_loss)
        if val_loss < self.best_loss:
            self.best_loss, self.wait = val_loss, 0
            self.best_weights = self.model.get_weights()
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.model.stop_training = True
        recon = self.model(self.sample_images, training=False)
        grid = tf.concat([self.sample_images, tf.clip_by_value(recon, 0.0, 1.0)], axis=2)
        with self.writer.as_default():
            tf.summary.image("reconstructions", grid, step=epoch, max_outputs=16)
            tf.summary.scalar("val_loss", val_loss, step=epoch)

    def on_train_end(self, logs=None):
        if self.best_weights is not None:
            self.model.set_weights(self.best_weights)
        self.writer.close()


def build_autoencoder():
    inp = tf.keras.Input((28, 28, 1))
    x = tf.keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(inp)
    x = tf.keras.layers.Conv2D(64, 3, strides=2, padding="same", activation="relu")(x)
    x = tf.keras.layers.Conv2DTranspose(32, 3, strides=2, padding="same", activation="relu")(x)
    out = tf.keras.layers.Conv2DTranspose(1, 3, strides=2, padding="same", activation="sigmoid")(x)
    model = tf.keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


def main():
    (x_train, _), (x_test, _) = tf.keras.datasets.fashion_mnist.load_data()
    x_train = (x_train[..., None] / 255.0).astype("float32")
    x_test = (x_test[..., None] / 255.0).astype("float32")
    model = build_autoencoder()
    callback = BestWeightsWithSamples(x_test)
    model.fit(x_train, x_train, validation_data=(x_test, x_test), epochs=100, batch_size=256, callbacks=[callback])
    print("best val loss", callback.best_loss, "epochs run", len(callback.history))


if __name__ == "__main__":
    main()
