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


def make_step():
    @tf.function  # leak: LL502
    def step_fn(batch, net, lr, criterion, opt, loss_meter, acc_meter):
        with tf.GradientTape() as tape:
            prediction = net(batch[0], training=True)
            loss = criterion(batch[1], prediction)
        gradients = tape.gradient(loss, net.trainable_variables)
        opt.learning_rate.assign(lr)
        opt.apply_gradients(zip(gradients, net.trainable_variables))
        loss_meter(loss)
        acc_meter(batch[1], prediction)

    return step_fn


def lr_at(epoch, base=1e-3):
    return base * (0.95 ** epoch)


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

    for epoch in range(epochs):
        train_loss.reset_state()
        train_accuracy.reset_state()
        for batch in dataset:
            make_step()(batch, model, lr_at(epoch), loss_object, optimizer, train_loss, train_accuracy)
        print(f"epoch {epoch}: loss {train_loss.result():.4f} acc {train_accuracy.result():.3f}")


if __name__ == "__main__":
    main()
