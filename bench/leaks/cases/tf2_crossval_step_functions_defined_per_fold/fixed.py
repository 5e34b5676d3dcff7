"""Video pain-recognition cross-validation: the tf.function train and validation steps are defined inside the per-fold training function

Source: https://github.com/sofiabroome/painface-recognition/issues/4
Style: tf2-loop
Kind: a tf.function created inside a function called once per fold of a cross-validation sweep: every call defines new train_step/validation_step Functions, each traced anew and kept with its graphs, so memory and tracing time grow fold after fold
"""
import tensorflow as tf

N_FRAMES, SIZE = 10, 112
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def build_model(n_frames=N_FRAMES, size=SIZE, n_classes=2):
    return tf.keras.Sequential([
        tf.keras.Input((n_frames, size, size, 3)),
        tf.keras.layers.TimeDistributed(tf.keras.layers.Conv2D(16, 3, strides=2, activation="relu")),
        tf.keras.layers.TimeDistributed(tf.keras.layers.GlobalAveragePooling2D()),
        tf.keras.layers.LSTM(32),
        tf.keras.layers.Dense(n_classes),
    ])


class FoldRunner(tf.Module):
    """Holds the model of the current fold; the step functions are defined once, at module level."""

    def __init__(self, lr):
        super().__init__()
        self.model = build_model()
        self.optimizer = tf.keras.optimizers.Adam(lr)
        self.train_acc = tf.keras.metrics.SparseCategoricalAccuracy()
        self.val_acc = tf.keras.metrics.SparseCategoricalAccuracy()


@tf.function(reduce_retracing=True)
def train_step(runner, clips, labels):
    with tf.GradientTape() as tape:
        logits = runner.model(clips, training=True)
        loss = loss_fn(labels, logits)
    grads = tape.gradient(loss, runner.model.trainable_variables)
    runner.optimizer.apply_gradients(zip(grads, runner.model.trainable_variables))
    runner.train_acc.update_state(labels, logits)
    return loss


def validation_step(runner, clips, labels):
    logits = runner.model(clips, training=False)
    runner.val_acc.update_state(labels, logits)
    return loss_fn(labels, logits)


def video_level_train(runner, train_ds, val_ds, epochs):
    for epoch in range(epochs):
        runner.train_acc.reset_state()
        runner.val_acc.reset_state()
        for clips, labels in train_ds:
            train_step(runner, clips, labels)
        for clips, labels in val_ds:
            validation_step(runner, clips, labels)
        print(f"epoch {epoch}: train acc {runner.train_acc.result():.3f} val acc {runner.val_acc.result():.3f}")
    return float(runner.val_acc.result())


def crossval_sweep(folds, epochs=30, lr=1e-4):
    scores = []
    for k, (train_ds, val_ds) in enumerate(folds):
        runner = FoldRunner(lr)
        scores.append(video_level_train(runner, train_ds, val_ds, epochs))
        print(f"fold {k}: {scores[-1]:.3f}")
        del runner
        tf.keras.backend.clear_session()
    return sum(scores) / len(scores)
