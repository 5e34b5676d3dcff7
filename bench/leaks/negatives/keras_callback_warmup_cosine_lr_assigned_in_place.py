"""Keras callback that sets a warmup-cosine learning rate every batch by assigning the optimizer's existing variable

Source: https://keras.io/api/callbacks/learning_rate_scheduler/
Style: keras-callback
Kind: negative: resembles a variable or graph op created on every training step (variable-per-call, TF1 graph growth) and a callback keeping per-batch data on itself; `learning_rate.assign()` writes into the one variable the optimizer already owns (eager, no new variable or op), and the callback keeps one Python float per epoch
"""
import math

import numpy as np
import tensorflow as tf


class WarmupCosine(tf.keras.callbacks.Callback):
    def __init__(self, base_lr, total_steps, warmup_steps=1000, min_lr=1e-6):
        super().__init__()
        self.base_lr, self.total_steps = base_lr, total_steps
        self.warmup_steps, self.min_lr = warmup_steps, min_lr
        self.step = 0
        self.epoch_lrs = []

    def lr_at(self, step):
        if step < self.warmup_steps:
            return self.base_lr * (step + 1) / self.warmup_steps
        progress = (step - self.warmup_steps) / max(1, self.total_steps - self.warmup_steps)
        return self.min_lr + 0.5 * (self.base_lr - self.min_lr) * (1 + math.cos(math.pi * min(1.0, progress)))

    def on_train_batch_begin(self, batch, logs=None):
        self.model.optimizer.learning_rate.assign(self.lr_at(self.step))
        self.step += 1

    def on_epoch_end(self, epoch, logs=None):
        lr = float(self.model.optimizer.learning_rate.numpy())
        self.epoch_lrs.append(lr)
        if logs is not None:
            logs["lr"] = lr


def build_model(num_classes=100):
    inputs = tf.keras.Input((32, 32, 3))
    x = inputs
    for filters in (64, 128, 256):
        x = tf.keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = tf.keras.layers.BatchNormalization()(x)
        x = tf.keras.layers.MaxPool2D()(x)
    x = tf.keras.layers.GlobalAveragePooling2D()(x)
    return tf.keras.Model(inputs, tf.keras.layers.Dense(num_classes)(x))


def main(x_train, y_train, x_val, y_val, epochs=200, batch_size=128):
    model = build_model()
    model.compile(
        optimizer=tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9),
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    steps = epochs * int(np.ceil(len(x_train) / batch_size))
    schedule = WarmupCosine(base_lr=0.1, total_steps=steps)
    model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, validation_data=(x_val, y_val),
              callbacks=[schedule, tf.keras.callbacks.CSVLogger("train_log.csv")])
    return model, schedule.epoch_lrs
