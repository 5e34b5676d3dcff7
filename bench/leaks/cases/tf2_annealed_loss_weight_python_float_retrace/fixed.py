"""Two-term segmentation loss on the GPU: the annealed weight of the second loss is passed to the tf.function step as a Python float

Source: https://github.com/tensorflow/tensorflow/issues/29027
Style: tf2-loop
Kind: a tf.function called with a Python number that changes every step: `lam` (the boundary-loss weight, annealed per step) is a Python float, so every new value traces and keeps a new concrete function; host memory climbs while training on the GPU (fix from the thread: pass the weight as a tensor)
"""
import tensorflow as tf


def build_unet(num_classes=2):
    inputs = tf.keras.Input((256, 256, 3))
    x1 = tf.keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inputs)
    p1 = tf.keras.layers.MaxPool2D()(x1)
    x2 = tf.keras.layers.Conv2D(64, 3, padding="same", activation="relu")(p1)
    u1 = tf.keras.layers.UpSampling2D()(x2)
    c1 = tf.keras.layers.Concatenate()([u1, x1])
    x3 = tf.keras.layers.Conv2D(32, 3, padding="same", activation="relu")(c1)
    outputs = tf.keras.layers.Conv2D(num_classes, 1)(x3)
    return tf.keras.Model(inputs, outputs)


def boundary_loss(y_true, logits):
    probs = tf.nn.softmax(logits)[..., 1]
    edges = tf.image.sobel_edges(tf.cast(y_true[..., None], tf.float32))
    edge_map = tf.sqrt(tf.reduce_sum(tf.square(edges), axis=-1))[..., 0]
    return tf.reduce_mean(edge_map * tf.abs(probs - tf.cast(y_true, tf.float32)))


model = build_unet()
optimizer = tf.keras.optimizers.Adam(1e-4)
ce = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_loss = tf.keras.metrics.Mean()


@tf.function
def train_step(images, masks, lam):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = ce(masks, logits) + lam * boundary_loss(masks, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    train_loss(loss)


def lam_schedule(step, total_steps, lam_max=1.0):
    return lam_max * min(1.0, step / (0.5 * total_steps))


def fit(dataset, epochs=40, steps_per_epoch=500):
    total = epochs * steps_per_epoch
    step = 0
    for epoch in range(epochs):
        train_loss.reset_state()
        for images, masks in dataset.take(steps_per_epoch):
            lam = lam_schedule(step, total)
            train_step(images, masks, tf.constant(lam, tf.float32))
            step += 1
        print(f"epoch {epoch}: loss {train_loss.result():.4f}")
        model.save_weights(f"unet_{epoch:03d}.weights.h5")
