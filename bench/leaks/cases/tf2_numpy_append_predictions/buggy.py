"""TF prediction loop grows its logits array with np.append on every evaluation batch

Source: https://github.com/huggingface/transformers/pull/9746
Style: tf2-loop
Kind: numpy array of predictions regrown every batch (family array-regrowth): np.append copies the whole array each step, so memory traffic is quadratic and the loop stalls on large eval sets
"""
import numpy as np
import tensorflow as tf


def build_classifier(vocab=30_000, n_labels=3):
    return tf.keras.Sequential([
        tf.keras.layers.Embedding(vocab, 128),
        tf.keras.layers.GlobalAveragePooling1D(),
        tf.keras.layers.Dense(256, activation="gelu"),
        tf.keras.layers.Dense(n_labels),
    ])


@tf.function
def prediction_step(model, input_ids):
    return model(input_ids, training=False)


def collect_logits(model, dataset):
    all_logits = None
    all_labels = None
    for step, (input_ids, labels) in enumerate(dataset):
        logits = prediction_step(model, input_ids)
        if all_logits is None:
            all_logits = logits.numpy()
            all_labels = labels.numpy()
        else:
            all_logits = np.append(all_logits, logits.numpy(), axis=0)  # leak: new:array-regrowth
            all_labels = np.append(all_labels, labels.numpy(), axis=0)  # leak: new:array-regrowth
        if step % 1000 == 0:
            print(f"predicted {len(all_logits)} examples")
    return all_logits, all_labels


def evaluation_set(rng, n=500_000, seq=128):
    ids = rng.integers(1, 30_000, (n, seq)).astype(np.int32)
    labels = rng.integers(0, 3, n)
    return tf.data.Dataset.from_tensor_slices((ids, labels)).batch(64)


if __name__ == "__main__":
    model = build_classifier()
    all_logits, labels = collect_logits(model, evaluation_set(np.random.default_rng(0)))
    print("accuracy", float((all_logits.argmax(-1) == labels).mean()))
