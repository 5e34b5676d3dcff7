"""A @tf.function train() reassigns `dataset = dataset.shuffle(1000)` at the start of every epoch

Source: https://github.com/tensorflow/tensorflow/issues/36988
Style: tf2-loop
Kind: tf.data pipeline rebuilt per epoch (family dataset-per-epoch): each epoch wraps the previous pipeline in one more ShuffleDataset with its own buffer, and the traced graph holds them all
"""
import numpy as np
import tensorflow as tf


def smooth_l1(boxes, predicted):
    diff = tf.abs(boxes - predicted)
    return tf.reduce_mean(tf.where(diff < 1.0, 0.5 * diff ** 2, diff - 0.5))


def focal(labels, logits, gamma=2.0):
    probs = tf.sigmoid(logits)
    ce = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    weight = tf.where(labels > 0, 1 - probs, probs) ** gamma
    return tf.reduce_mean(weight * ce)


def build_detector(n_anchors=100, n_classes=20):
    inputs = tf.keras.Input((224, 224, 3))
    net = tf.keras.applications.MobileNetV2(include_top=False, weights=None, input_tensor=inputs).output
    net = tf.keras.layers.GlobalAveragePooling2D()(net)
    boxes = tf.keras.layers.Reshape((n_anchors, 4))(tf.keras.layers.Dense(n_anchors * 4)(net))
    classes = tf.keras.layers.Reshape((n_anchors, n_classes))(tf.keras.layers.Dense(n_anchors * n_classes)(net))
    return tf.keras.Model(inputs, [boxes, classes])


@tf.function
def fit_detector(model, dataset, epochs=50, lr=1e-5):
    optimizer = tf.keras.optimizers.Adam(learning_rate=lr)
    for i in tf.range(epochs):
        dataset = dataset.shuffle(1000)  # leak: new:dataset-per-epoch
        for images, boxes, labels in dataset:
            with tf.GradientTape() as tape:
                box_pred, class_pred = model(images, training=True)
                loss = smooth_l1(boxes, box_pred) + focal(labels, class_pred)
            gradients = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        tf.print("epoch", i, "loss", loss)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    n = 512
    data = tf.data.Dataset.from_tensor_slices((
        rng.random((n, 224, 224, 3), dtype=np.float32),
        rng.random((n, 100, 4), dtype=np.float32),
        (rng.random((n, 100, 20)) > 0.95).astype(np.float32),
    )).batch(16)
    fit_detector(build_detector(), data)
