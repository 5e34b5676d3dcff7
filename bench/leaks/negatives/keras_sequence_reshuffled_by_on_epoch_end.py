"""Keras CNN trained once with a Sequence that reshuffles its index in on_epoch_end, with a per-epoch memory probe

Source: https://github.com/keras-team/keras/issues/12100
Style: keras-fit
Kind: negative: resembles a data pipeline rebuilt every epoch and memory growth in fit_generator; one Sequence object is built once and reshuffles its own index array in on_epoch_end, fit() is called once for all epochs, and the callback only prints the process RSS (in the report memory stabilised after a few epochs)
"""
import os

import numpy as np
import psutil
from tensorflow import keras


class ShardSequence(keras.utils.Sequence):
    def __init__(self, images, labels, batch_size=32, shuffle=True):
        super().__init__()
        self.images, self.labels = images, labels
        self.batch_size, self.shuffle = batch_size, shuffle
        self.indexes = np.arange(len(images))
        self.on_epoch_end()

    def __len__(self):
        return len(self.indexes) // self.batch_size

    def __getitem__(self, index):
        idx = self.indexes[index * self.batch_size:(index + 1) * self.batch_size]
        x = self.images[idx].astype(np.float32) / 255.0
        y = keras.utils.to_categorical(self.labels[idx], 10)
        return x, y

    def on_epoch_end(self):
        if self.shuffle:
            np.random.shuffle(self.indexes)


class RssProbe(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        rss = psutil.Process(os.getpid()).memory_info().rss / 2 ** 20
        print(f"epoch {epoch}: rss {rss:.0f} MiB")


def build_model():
    model = keras.Sequential([
        keras.layers.Input((64, 64, 3)),
        keras.layers.Conv2D(32, 3, activation="relu"), keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, activation="relu"), keras.layers.MaxPooling2D(),
        keras.layers.Dropout(0.25), keras.layers.Flatten(),
        keras.layers.Dense(128, activation="relu"), keras.layers.Dropout(0.5),
        keras.layers.Dense(10, activation="softmax"),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="categorical_crossentropy", metrics=["accuracy"])
    return model


if __name__ == "__main__":
    data = np.load("shards_uint8.npz")
    train_seq = ShardSequence(data["x_train"], data["y_train"])
    val_seq = ShardSequence(data["x_val"], data["y_val"], shuffle=False)
    model = build_model()
    model.fit(train_seq, validation_data=val_seq, epochs=100, callbacks=[RssProbe()], verbose=2)
    model.save("shard_cnn.keras")
