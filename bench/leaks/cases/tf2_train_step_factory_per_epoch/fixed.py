"""A factory returns a freshly decorated @tf.function train step, and the loop calls the factory every step

Source: https://github.com/tensorflow/tensorflow/issues/50379
Style: tf2-loop
Kind: new tf.function per step: each factory call makes a new Function with an empty trace cache, so every step retraces and keeps the graph
"""
import numpy as np
import tensorflow as tf


def make_model(n_classes=10):
    return tf.keras.Sequential([
        tf.keras.layers.Conv2D(32, 3, activation="relu", input_shape=(32, 32, 3)),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(n_classes),
    ])


def make_train_step(model, loss_object, optimizer, train_loss, train_accuracy):
    """Called once: the returned Function is reused for every batch of every epoch."""

    @tf.function
    def train_step(batch, lr):
        with tf.GradientTape() as tape:
            prediction = model(batch[0], training=True)
            loss = loss_object(batch[1], prediction)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.learning_rate.assign(lr)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_loss(loss)
        train_accuracy(batch[1], prediction)

    return train_step


def lr_at(epoch, base=1e-3):
    return tf.constant(base * (0.95 ** epoch), tf.float32)


def main(epochs=30):
    rng = np.random.default_rng(0)
    images = rng.random((4096, 32, 32, 3), dtype=np.float32)
    labels = rng.integers(0, 10, 4096)
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(4096).batch(64)
    model = make_model()
    optimizer = tf.keras.optimizers.Adam(learning_rate=tf.Variable(1e-3))
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_loss = tf.keras.metrics.Mean()
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
    train_step = make_train_step(model, loss_object, optimizer, train_loss, train_accuracy)

    for epoch in range(epochs):
        train_loss.reset_state()
        train_accuracy.reset_state()
        for batch in dataset:
            train_step(batch, lr_at(epoch))
        print(f"epoch {epoch}: loss {train_loss.result():.4f} acc {train_accuracy.result():.3f}")


if __name__ == "__main__":
    main()
