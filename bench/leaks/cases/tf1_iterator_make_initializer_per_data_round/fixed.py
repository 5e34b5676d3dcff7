"""An active-learning loop re-points a structure iterator at the grown labelled pool with make_initializer every round

Source: https://github.com/tensorflow/tensorflow/issues/31061
Source: https://github.com/tensorflow/tensorflow/issues/23904
Style: tf1-session
Kind: TF1 graph ops built inside the session loop: every round builds a new from_tensor_slices dataset (embedding the labelled arrays as graph constants) and a new make_initializer op, so the default graph and host memory grow with every round
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

IMG, N_CLASSES, BATCH = 32, 10, 64


def build_classifier(images, training):
    x = tf.layers.conv2d(images, 32, 3, activation=tf.nn.relu, padding="same")
    x = tf.layers.max_pooling2d(x, 2, 2)
    x = tf.layers.conv2d(x, 64, 3, activation=tf.nn.relu, padding="same")
    x = tf.layers.max_pooling2d(x, 2, 2)
    x = tf.layers.dropout(tf.layers.flatten(x), 0.3, training=training)
    return tf.layers.dense(x, N_CLASSES)


def select_most_uncertain(probs, k):
    entropy = -(probs * np.log(probs + 1e-9)).sum(axis=1)
    return np.argsort(-entropy)[:k]


def main(rounds=200, query_size=500, epochs_per_round=3):
    rng = np.random.default_rng(0)
    pool_x = rng.random((60_000, IMG, IMG, 3), dtype=np.float32)
    pool_y = rng.integers(0, N_CLASSES, 60_000).astype(np.int64)
    labelled = rng.choice(len(pool_x), 1_000, replace=False)

    x_feed = tf.placeholder(tf.float32, [None, IMG, IMG, 3])
    y_feed = tf.placeholder(tf.int64, [None])
    ds = tf.data.Dataset.from_tensor_slices((x_feed, y_feed))
    ds = ds.shuffle(tf.shape(x_feed, out_type=tf.int64)[0]).batch(BATCH)
    iterator = tf.data.Iterator.from_structure(tf.data.get_output_types(ds), tf.data.get_output_shapes(ds))
    init_op = iterator.make_initializer(ds)
    images, labels = iterator.get_next()
    training = tf.placeholder_with_default(False, [])
    classifier = tf.make_template("classifier", build_classifier)
    logits = classifier(images, training)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)

    probe = tf.placeholder(tf.float32, [None, IMG, IMG, 3])
    probe_probs = tf.nn.softmax(classifier(probe, False))

    init_vars = tf.global_variables_initializer()
    tf.get_default_graph().finalize()
    with tf.Session() as sess:
        sess.run(init_vars)
        for r in range(rounds):
            for _ in range(epochs_per_round):
                sess.run(init_op, {x_feed: pool_x[labelled], y_feed: pool_y[labelled]})
                while True:
                    try:
                        sess.run(train_op, {training: True})
                    except tf.errors.OutOfRangeError:
                        break
            unlabelled = np.setdiff1d(np.arange(len(pool_x)), labelled)
            candidates = rng.choice(unlabelled, 5_000, replace=False)
            probs = np.concatenate([sess.run(probe_probs, {probe: pool_x[c]})
                                    for c in np.array_split(candidates, 20)])
            labelled = np.concatenate([labelled, candidates[select_most_uncertain(probs, query_size)]])
            print(f"round {r}: {len(labelled)} labelled, graph has "
                  f"{len(tf.get_default_graph().get_operations())} ops")


if __name__ == "__main__":
    main()
