"""Keras fit with a LambdaCallback that logs a confusion-matrix image to TensorBoard at the end of every epoch

Source: https://www.tensorflow.org/tensorboard/image_summaries
Style: keras-callback
Kind: negative: resembles a pyplot figure created every epoch and never closed (LL303) and a summary writer created per call (writer-per-call); the figure is closed inside figure_to_png_tensor right after it is rendered to PNG, the file writer is created once before fit, and the model is called once per epoch on a fixed test array (a direct call, not predict()) whose output is reduced to a confusion matrix
"""
import io
import itertools

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import sklearn.metrics
import tensorflow as tf
from tensorflow import keras

LABELS = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
LOGDIR = "runs/fashion_mlp"

(train_images, train_labels), (test_images, test_labels) = keras.datasets.fashion_mnist.load_data()
train_images, test_images = train_images / 255.0, test_images / 255.0

cm_writer = tf.summary.create_file_writer(LOGDIR + "/cm")


def figure_to_png_tensor(figure):
    """Render a matplotlib figure to a PNG image tensor; the figure is closed here."""
    buf = io.BytesIO()
    plt.savefig(buf, format="png")
    plt.close(figure)
    buf.seek(0)
    image = tf.image.decode_png(buf.getvalue(), channels=4)
    return tf.expand_dims(image, 0)


def draw_confusion(cm, class_names):
    figure = plt.figure(figsize=(8, 8))
    plt.imshow(cm, interpolation="nearest", cmap=plt.cm.Blues)
    plt.title("Confusion matrix")
    plt.colorbar()
    ticks = np.arange(len(class_names))
    plt.xticks(ticks, class_names, rotation=45)
    plt.yticks(ticks, class_names)
    cm = np.around(cm.astype("float") / cm.sum(axis=1)[:, np.newaxis], decimals=2)
    threshold = cm.max() / 2.0
    for i, j in itertools.product(range(cm.shape[0]), range(cm.shape[1])):
        plt.text(j, i, cm[i, j], horizontalalignment="center", color="white" if cm[i, j] > threshold else "black")
    plt.tight_layout()
    plt.ylabel("True label")
    plt.xlabel("Predicted label")
    return figure


def make_model():
    model = keras.Sequential([
        keras.Input((28, 28)),
        keras.layers.Flatten(),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


model = make_model()


def log_confusion_each_epoch(epoch, logs):
    test_pred = np.argmax(model(test_images, training=False).numpy(), axis=1)
    cm = sklearn.metrics.confusion_matrix(test_labels, test_pred)
    cm_image = figure_to_png_tensor(draw_confusion(cm, class_names=LABELS))
    with cm_writer.as_default():
        tf.summary.image("val_confusion", cm_image, step=epoch)


if __name__ == "__main__":
    tensorboard_callback = keras.callbacks.TensorBoard(log_dir=LOGDIR)
    confusion_cb = keras.callbacks.LambdaCallback(on_epoch_end=log_confusion_each_epoch)
    model.fit(train_images, train_labels, epochs=50, verbose=0, callbacks=[tensorboard_callback, confusion_cb],
              validation_data=(test_images, test_labels))
