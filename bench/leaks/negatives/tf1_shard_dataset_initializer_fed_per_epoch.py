"""TF1 training over in-memory shards: one placeholder-fed dataset and iterator initializer built up front, re-run with each shard every epoch

Source: https://www.tensorflow.org/versions/r1.15/api_docs/python/tf/data/make_initializable_iterator
Style: tf1-session
Kind: negative: resembles a tf.data dataset and iterator initializer built per epoch/shard inside the session loop; here the dataset reads from placeholders, the initializer and the Saver are built once before the session, and the loop only runs them with new feeds
"""
import glob
import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

N_FEATURES = 64
N_CLASSES = 10
BATCH = 256


def classifier(x):
    h = tf.layers.dense(x, 256, tf.nn.relu)
    h = tf.layers.dense(h, 256, tf.nn.relu)
    return tf.layers.dense(h, N_CLASSES)


def train(shard_dir, epochs=50, ckpt_dir="checkpoints/shards"):
    features_ph = tf.placeholder(tf.float32, [None, N_FEATURES])
    labels_ph = tf.placeholder(tf.int64, [None])
    seed_ph = tf.placeholder(tf.int64, [])
    dataset = (tf.data.Dataset.from_tensor_slices((features_ph, labels_ph))
               .shuffle(10000, seed=seed_ph)
               .batch(BATCH))
    iterator = tf.data.make_initializable_iterator(dataset)
    x, y = iterator.get_next()
    logits = classifier(x)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
    saver = tf.train.Saver(max_to_keep=3)
    shard_paths = sorted(glob.glob(os.path.join(shard_dir, "*.npz")))
    os.makedirs(ckpt_dir, exist_ok=True)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(epochs):
            losses = []
            for shard_path in shard_paths:
                shard = np.load(shard_path)
                sess.run(iterator.initializer,
                         feed_dict={features_ph: shard["x"], labels_ph: shard["y"], seed_ph: epoch})
                while True:
                    try:
                        _, value = sess.run([train_op, loss])
                        losses.append(value)
                    except tf.errors.OutOfRangeError:
                        break
            saver.save(sess, os.path.join(ckpt_dir, "model"), global_step=epoch)
            print(f"epoch {epoch}: loss {np.mean(losses):.4f}")


if __name__ == "__main__":
    train("data/feature_shards")
