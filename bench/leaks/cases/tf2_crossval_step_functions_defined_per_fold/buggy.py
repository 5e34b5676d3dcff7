"""Video pain-recognition cross-validation: the tf.function train and validation steps are defined inside the per-fold training function

Source: https://github.com/sofiabroome/painface-recognition/issues/4
Style: tf2-loop
Kind: a tf.function created inside a function called once per fold of a cross-validation sweep: every call defines new train_step/validation_step Functions, each traced anew and kept with its graphs, so memory and tracing time grow fold after fold
"""
import tensorflow as tf


def build_model(n_frames=10, size=112, n_classes=2):
    return tf.keras.Sequential([
        tf.keras.Input((n_frames, size, size, 3)),
        tf.keras.layers.TimeDistributed(tf.keras.layers.Conv2D(16, 3, strides=2, activation="relu")),
        tf.keras.layers.TimeDistributed(tf.keras.layers.GlobalAveragePooling2D()),
        tf.keras.layers.LSTM(32),
        tf.keras.layers.Dense(n_classes),
    ])


def video_level_train(model, train_ds, val_ds, epochs, lr):
    optimizer = tf.keras.optimizers.Adam(lr)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_acc = tf.keras.metrics.SparseCategoricalAccuracy()
    val_acc = tf.keras.metrics.SparseCategoricalAccuracy()

    @tf.function  # leak: LL502
    def train_step(clips, labels):
        with tf.GradientTape() as tape:
            logits = model(clips, training=True)
            loss = loss_fn(labels, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        train_acc.update_state(labels, logits)
        return loss

    @tf.function  # leak: LL502
    def validation_step(clips, labels):
        logits = model(clips, training=False)
        val_acc.update_state(labels, logits)
        return loss_fn(labels, logits)

    for epoch in range(epochs):
        train_acc.reset_state()
        val_acc.reset_state()
        for clips, labels in train_ds:
            train_step(clips, labels)
        for clips, labels in val_ds:
            validation_step(clips, labels)
        print(f"epoch {epoch}: train acc {train_acc.result():.3f} val acc {val_acc.result():.3f}")
    return float(val_acc.result())


def crossval_sweep(folds, epochs=30, lr=1e-4):
    scores = []
    for k, (train_ds, val_ds) in enumerate(folds):
        model = build_model()
        scores.append(video_level_train(model, train_ds, val_ds, epochs, lr))
        print(f"fold {k}: {scores[-1]:.3f}")
    return sum(scores) / len(scores)
