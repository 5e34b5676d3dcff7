"""Grad-CAM explanation callback creates a new TensorBoard file writer in every on_epoch_end

Source: https://github.com/sicara/tf-explain/issues/49
Source: https://github.com/sicara/tf-explain/pull/52
Style: keras-callback
Kind: a summary writer created per epoch and never closed (family writer-per-call): each epoch opens another writer (resource, event file and flush thread) on the same log directory, and they pile up for the whole fit
"""
from datetime import datetime
from pathlib import Path

import numpy as np
import tensorflow as tf
from tensorflow import keras


def grad_cam(conv_model, images, class_index):
    with tf.GradientTape() as tape:
        conv_out, predictions = conv_model(images, training=False)
        score = predictions[:, class_index]
    grads = tape.gradient(score, conv_out)
    weights = tf.reduce_mean(grads, axis=(1, 2), keepdims=True)
    cam = tf.nn.relu(tf.reduce_sum(weights * conv_out, axis=-1))
    cam = cam / (tf.reduce_max(cam, axis=(1, 2), keepdims=True) + 1e-8)
    heatmaps = tf.image.resize(cam[..., None], images.shape[1:3])
    return tf.concat([images, tf.tile(heatmaps, [1, 1, 1, 3])], axis=2)


class GradCAMCallback(keras.callbacks.Callback):
    def __init__(self, validation_images, layer_name, class_index, output_dir="logs/grad_cam"):
        super().__init__()
        self.validation_images = tf.convert_to_tensor(validation_images, tf.float32)
        self.layer_name = layer_name
        self.class_index = class_index
        self.output_dir = Path(output_dir) / datetime.now().strftime("%Y%m%d-%H%M%S.%f")
        self.output_dir.mkdir(parents=True, exist_ok=True)

    def on_train_begin(self, logs=None):
        layer_output = self.model.get_layer(self.layer_name).output
        self.conv_model = keras.Model(self.model.inputs, [layer_output, self.model.output])

    def on_epoch_end(self, epoch, logs=None):
        grid = grad_cam(self.conv_model, self.validation_images, self.class_index)
        file_writer = tf.summary.create_file_writer(str(self.output_dir))  # leak: new:writer-per-call
        with file_writer.as_default():
            tf.summary.image("Grad CAM", grid, step=epoch, max_outputs=8)


def build_model(num_classes=10):
    inputs = keras.Input((32, 32, 3))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu", name="target_conv")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(num_classes, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


if __name__ == "__main__":
    (x_train, y_train), (x_val, y_val) = keras.datasets.cifar10.load_data()
    x_train, x_val = x_train.astype("float32") / 255.0, x_val.astype("float32") / 255.0
    model = build_model()
    callback = GradCAMCallback(x_val[:8], layer_name="target_conv", class_index=int(y_val[0, 0]))
    model.fit(x_train, y_train, validation_data=(x_val, y_val), epochs=500, batch_size=128,
              callbacks=[callback, keras.callbacks.CSVLogger("history.csv")])
    print(np.round(model.evaluate(x_val, y_val, verbose=0), 4))
