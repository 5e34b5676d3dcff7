"""Custom training loop updates tf.metrics Mean/Accuracy objects every step and never resets them between epochs

Source: https://github.com/lucasjinreal/tfboys/issues/1
Style: tf2-loop
Kind: negative: resembles metric objects never reset (metric-never-reset); Keras Mean and SparseCategoricalAccuracy keep fixed-size running totals, so the logged "epoch" figures average the whole run (a wrong number) but no memory grows
"""
import logging

import numpy as np
import tensorflow as tf

logging.basicConfig(level=logging.INFO)
FIRST_EPOCH = 0
EPOCHS = 120


def build_model(n_classes=100):
    return tf.keras.Sequential([
        tf.keras.layers.Conv2D(64, 3, activation="relu", input_shape=(32, 32, 3)),
        tf.keras.layers.MaxPool2D(),
        tf.keras.layers.Conv2D(128, 3, activation="relu"),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(n_classes),
    ])


def main(ckpt_path="checkpoints/cifar100_{epoch}.h5"):
    rng = np.random.default_rng(0)
    images = rng.random((6400, 32, 32, 3), dtype=np.float32)
    labels = rng.integers(0, 100, 6400)
    batches = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(6400).batch(64)
    model = build_model()
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    loss_meter = tf.metrics.Mean(name="loss_meter")
    acc_meter = tf.metrics.SparseCategoricalAccuracy(name="acc_meter")

    for epoch in range(FIRST_EPOCH, EPOCHS):
        try:
            for batch, (x, y) in enumerate(batches):
                with tf.GradientTape() as tape:
                    predictions = model(x, training=True)
                    loss = loss_object(y, predictions)
                gradients = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(gradients, model.trainable_variables))
                loss_meter(loss)
                acc_meter(y, predictions)
                if batch % 50 == 0:
                    logging.info("[%d/%d] running loss=%.4f acc=%.4f",
                                 epoch, batch, loss_meter.result(), acc_meter.result())
        except KeyboardInterrupt:
            logging.warning("stopped by user, saving a checkpoint")
            model.save_weights(ckpt_path.format(epoch=epoch))
            return
        model.save_weights(ckpt_path.format(epoch=epoch))


if __name__ == "__main__":
    main()
