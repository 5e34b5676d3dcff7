"""A TF1 tabular classifier rebuilds its shuffled, batched dataset and a one-shot iterator at the start of every epoch

Source: https://github.com/tensorflow/tensorflow/issues/14868
Style: tf1-session
Kind: TF1 graph ops built inside the session loop: to reshuffle without `repeat()` merging epoch boundaries, each epoch adds a new shuffle/batch dataset, a one-shot iterator and its get_next op to the default graph; epochs get slower and slower and the graph keeps growing
"""
import time

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

N_FEATURES, N_CLASSES = 64, 5


def build_model():
    x = tf.placeholder(tf.float32, [None, N_FEATURES], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    h = tf.layers.dense(x, 256, activation=tf.nn.relu)
    h = tf.layers.dropout(tf.layers.dense(h, 256, activation=tf.nn.relu), 0.2)
    logits = tf.layers.dense(h, N_CLASSES)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
    return x, y, loss, acc, train_op


def main(num_epochs=500, batch_size=32):
    rng = np.random.default_rng(0)
    features = rng.normal(size=(100_000, N_FEATURES)).astype(np.float32)
    labels = (features[:, :N_CLASSES] + 0.5 * rng.normal(size=(100_000, N_CLASSES))).argmax(1).astype(np.int64)
    x, y, loss, acc, train_op = build_model()
    dataset = tf.data.Dataset.from_tensor_slices((features, labels))

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(num_epochs):
            t0 = time.time()
            epoch_data = dataset.shuffle(len(features)).batch(batch_size)  # leak: LL504
            next_batch = epoch_data.make_one_shot_iterator().get_next()  # leak: LL504
            losses, accs = [], []
            while True:
                try:
                    xb, yb = sess.run(next_batch)
                except tf.errors.OutOfRangeError:
                    break
                _, l, a = sess.run([train_op, loss, acc], {x: xb, y: yb})
                losses.append(l)
                accs.append(a)
            print(f"epoch {epoch}: loss {np.mean(losses):.4f} acc {np.mean(accs):.4f} "
                  f"({time.time() - t0:.1f}s, {len(tf.get_default_graph().get_operations())} ops)")


if __name__ == "__main__":
    main()
