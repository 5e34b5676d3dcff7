"""Custom loop with Keras metric objects created once, updated every step and reset at the start of every epoch

Source: https://rdocumentation.org/packages/keras/versions/2.8.0/topics/Metric
Style: tf2-loop
Kind: negative: resembles metric objects never reset; reset_state() runs each epoch for both the train and validation metrics
"""
import numpy as np
import tensorflow as tf


def build_model():
    return tf.keras.Sequential([
        tf.keras.Input((28, 28)),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(256, activation="relu"),
        tf.keras.layers.Dense(10),
    ])


def main(epochs=30):
    rng = np.random.default_rng(0)
    x = rng.random((12_000, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, 12_000)
    train_ds = tf.data.Dataset.from_tensor_slices((x[:10_000], y[:10_000])).shuffle(10_000).batch(128)
    val_ds = tf.data.Dataset.from_tensor_slices((x[10_000:], y[10_000:])).batch(256)

    model = build_model()
    optimizer = tf.keras.optimizers.SGD(0.05, momentum=0.9)
    criterion = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    running_loss = tf.keras.metrics.Mean()
    running_acc = tf.keras.metrics.SparseCategoricalAccuracy()
    val_acc = tf.keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            logits = model(images, training=True)
            loss = criterion(labels, logits)
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        running_loss.update_state(loss)
        running_acc.update_state(labels, logits)

    for epoch in range(epochs):
        for metric in (running_loss, running_acc, val_acc):
            metric.reset_state()
        for images, labels in train_ds:
            train_step(images, labels)
        for images, labels in val_ds:
            val_acc.update_state(labels, model(images, training=False))
        print(f"epoch {epoch}: loss {running_loss.result():.4f} acc {running_acc.result():.3f} val_acc {val_acc.result():.3f}")


if __name__ == "__main__":
    main()
