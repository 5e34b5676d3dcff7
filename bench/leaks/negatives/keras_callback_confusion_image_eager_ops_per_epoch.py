"""Keras callback that renders a confusion-matrix figure to a PNG tensor every epoch and logs it to one file writer

Source: https://www.tensorflow.org/tensorboard/image_summaries
Source: https://github.com/tensorflow/tensorflow/issues/55486
Style: keras-callback
Kind: negative: resembles graph ops built per epoch (TF1 graph growth) and a summary writer created per call; under TF2 eager execution `tf.image.decode_png` and `tf.expand_dims` run as eager ops and add nothing to any graph, the figure is closed right after it is written to the buffer, and the writer is created once in `on_train_begin` and closed in `on_train_end` (the report's claim that these per-epoch ops fill memory was not reproduced)
"""
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import tensorflow as tf


def figure_to_image(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    buf.seek(0)
    image = tf.image.decode_png(buf.getvalue(), channels=4)
    return tf.expand_dims(image, 0)


def confusion_figure(cm, class_names):
    fig, ax = plt.subplots(figsize=(6, 6))
    ax.imshow(cm, cmap=plt.cm.Blues)
    ax.set_xticks(range(len(class_names)))
    ax.set_xticklabels(class_names, rotation=45)
    ax.set_yticks(range(len(class_names)))
    ax.set_yticklabels(class_names)
    for i in range(cm.shape[0]):
        for j in range(cm.shape[1]):
            ax.text(j, i, f"{cm[i, j]:.2f}", ha="center", color="black")
    fig.tight_layout()
    return fig


class ConfusionMatrixLogger(tf.keras.callbacks.Callback):
    def __init__(self, images, labels, class_names, logdir):
        super().__init__()
        self.images = tf.convert_to_tensor(images)
        self.labels = labels
        self.class_names = class_names
        self.logdir = logdir
        self.writer = None

    def on_train_begin(self, logs=None):
        self.writer = tf.summary.create_file_writer(self.logdir + "/cm")

    def on_epoch_end(self, epoch, logs=None):
        logits = self.model(self.images, training=False)
        preds = tf.argmax(logits, axis=-1).numpy()
        cm = tf.math.confusion_matrix(self.labels, preds, num_classes=len(self.class_names)).numpy()
        cm = np.round(cm / np.maximum(cm.sum(axis=1, keepdims=True), 1), 2)
        image = figure_to_image(confusion_figure(cm, self.class_names))
        with self.writer.as_default():
            tf.summary.image("confusion_matrix", image, step=epoch)

    def on_train_end(self, logs=None):
        self.writer.close()


def main(x_train, y_train, x_test, y_test, class_names):
    model = tf.keras.Sequential([
        tf.keras.Input((28, 28)),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(len(class_names)),
    ])
    model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    model.fit(x_train, y_train, epochs=20, validation_data=(x_test, y_test),
              callbacks=[ConfusionMatrixLogger(x_test[:512], y_test[:512], class_names, "logs/fashion")])
