"""Keras curriculum training: the same model is re-compiled and fit for one epoch in each of thousands of rounds

Source: https://github.com/tensorflow/tensorflow/issues/73864
Style: keras-fit
Kind: Keras state grows with every compile() in the loop: each round compiles the model again (new optimizer, new train function) and fits one epoch on a new dataset; host memory climbs round after round until the process is killed; clear_session() and gc.collect() did not help, compiling once before the loop did
"""
import numpy as np
import tensorflow as tf

IMG, N_CLASSES = 64, 10


def make_model():
    inputs = tf.keras.Input((IMG, IMG, 3))
    x = tf.keras.layers.Rescaling(1.0 / 255)(inputs)
    for filters in (32, 64, 128):
        x = tf.keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = tf.keras.layers.BatchNormalization()(x)
        x = tf.keras.layers.MaxPooling2D()(x)
    x = tf.keras.layers.GlobalAveragePooling2D()(x)
    x = tf.keras.layers.Dropout(0.3)(x)
    outputs = tf.keras.layers.Dense(N_CLASSES)(x)
    return tf.keras.Model(inputs, outputs, name="curriculum_cnn")


def difficulty_subset(images, labels, scores, round_idx, rounds):
    frac = 0.2 + 0.8 * min(1.0, round_idx / (0.5 * rounds))
    keep = np.argsort(scores)[: int(frac * len(scores))]
    return images[keep], labels[keep]


def make_dataset(images, labels, batch_size=64):
    ds = tf.data.Dataset.from_tensor_slices((images, labels))
    return ds.shuffle(len(images)).batch(batch_size).prefetch(tf.data.AUTOTUNE)


def main(rounds=10_000):
    data = np.load("tiles_with_difficulty.npz")
    images, labels, scores = data["images"], data["labels"], data["difficulty"]
    val = make_dataset(data["val_images"], data["val_labels"])
    model = make_model()
    history = []
    for r in range(rounds):
        x, y = difficulty_subset(images, labels, scores, r, rounds)
        model.compile(optimizer="sgd",  # leak: LL503
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
        hist = model.fit(make_dataset(x, y), epochs=1, validation_data=val if r % 50 == 0 else None, verbose=0)
        history.append(float(hist.history["loss"][-1]))
        if r % 50 == 0:
            print(f"round {r}: {len(x)} samples, loss {history[-1]:.4f}, "
                  f"val_acc {hist.history.get('val_accuracy', [float('nan')])[-1]:.3f}")
    model.save("curriculum_cnn.keras")


if __name__ == "__main__":
    main()
