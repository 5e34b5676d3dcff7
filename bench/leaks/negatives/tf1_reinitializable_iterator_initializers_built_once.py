"""A TF1 speech-command classifier switches one reinitializable iterator between its training and validation datasets

Source: https://www.tensorflow.org/versions/r1.15/api_docs/python/tf/data/Iterator
Source: https://github.com/tensorflow/tensorflow/issues/23904
Style: tf1-session
Kind: negative: resembles a tf.data iterator re-pointed with make_initializer inside the session loop (LL504); both datasets and both make_initializer ops are built once before the session, the graph is finalized, and the loop only runs the existing initializer ops
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

N_MFCC, FRAMES, N_WORDS, BATCH = 40, 98, 12, 100


def make_dataset(features, labels, training):
    ds = tf.data.Dataset.from_tensor_slices((features, labels))
    if training:
        ds = ds.shuffle(len(labels)).map(lambda f, l: (f + tf.random.normal(tf.shape(f), stddev=0.05), l))
    return ds.batch(BATCH)


def classifier(mfcc, training):
    x = tf.expand_dims(mfcc, -1)
    x = tf.layers.conv2d(x, 64, (20, 8), activation=tf.nn.relu, padding="same")
    x = tf.layers.dropout(tf.layers.max_pooling2d(x, 2, 2), 0.5, training=training)
    x = tf.layers.conv2d(x, 64, (10, 4), activation=tf.nn.relu, padding="same")
    return tf.layers.dense(tf.layers.flatten(x), N_WORDS)


def main(epochs=60):
    rng = np.random.default_rng(0)
    train_x = rng.normal(size=(20_000, FRAMES, N_MFCC)).astype(np.float32)
    train_y = rng.integers(0, N_WORDS, 20_000).astype(np.int64)
    val_x = rng.normal(size=(2_500, FRAMES, N_MFCC)).astype(np.float32)
    val_y = rng.integers(0, N_WORDS, 2_500).astype(np.int64)

    train_ds = make_dataset(train_x, train_y, training=True)
    val_ds = make_dataset(val_x, val_y, training=False)
    iterator = tf.data.Iterator.from_structure(tf.data.get_output_types(train_ds),
                                               tf.data.get_output_shapes(train_ds))
    train_init = iterator.make_initializer(train_ds)
    val_init = iterator.make_initializer(val_ds)
    mfcc, label = iterator.get_next()
    is_training = tf.placeholder_with_default(False, [])
    logits = classifier(mfcc, is_training)
    loss = tf.losses.sparse_softmax_cross_entropy(label, logits)
    correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, 1), label), tf.int64))
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
    init_vars = tf.global_variables_initializer()
    tf.get_default_graph().finalize()

    with tf.Session() as sess:
        sess.run(init_vars)
        for epoch in range(epochs):
            sess.run(train_init)
            while True:
                try:
                    sess.run(train_op, {is_training: True})
                except tf.errors.OutOfRangeError:
                    break
            sess.run(val_init)
            hits = 0
            while True:
                try:
                    hits += sess.run(correct)
                except tf.errors.OutOfRangeError:
                    break
            print(f"epoch {epoch}: val accuracy {hits / len(val_y):.4f}")


if __name__ == "__main__":
    main()
