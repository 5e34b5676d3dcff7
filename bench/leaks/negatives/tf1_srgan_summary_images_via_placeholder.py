"""Super-resolution GAN: progress images are assembled in numpy and logged through a placeholder built once; the graph is finalized

Source: https://github.com/david-gpu/srez/issues/35
Style: tf1-session
Kind: negative: image summaries written every N steps from the training loop (the summary op and its placeholder are built once; finalize() guards the graph)
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def generator(lr):
    with tf.variable_scope("gen"):
        h = tf.layers.conv2d(lr, 64, 3, padding="same", activation=tf.nn.relu)
        h = tf.depth_to_space(tf.layers.conv2d(h, 64 * 4, 3, padding="same"), 2)
        h = tf.depth_to_space(tf.layers.conv2d(h, 32 * 4, 3, padding="same"), 2)
        return tf.nn.sigmoid(tf.layers.conv2d(h, 3, 3, padding="same"))


def tile_progress(lr, sr, hr, max_images=8):
    lr_up = lr.repeat(4, axis=1).repeat(4, axis=2)
    rows = [np.concatenate([a, b, c], axis=1) for a, b, c in zip(lr_up[:max_images], sr[:max_images], hr[:max_images])]
    return np.concatenate(rows, axis=0)[None]


def train(steps=200_000, batch=16):
    lr_in = tf.placeholder(tf.float32, [None, 16, 16, 3])
    hr_in = tf.placeholder(tf.float32, [None, 64, 64, 3])
    sr = generator(lr_in)
    loss = tf.reduce_mean(tf.abs(sr - hr_in))
    train_op = tf.train.AdamOptimizer(1e-4).minimize(loss)
    progress_in = tf.placeholder(tf.float32, [1, None, None, 3])
    progress_summary = tf.summary.image("progress", progress_in)
    loss_summary = tf.summary.scalar("loss", loss)
    init = tf.global_variables_initializer()
    writer = tf.summary.FileWriter("train_log")
    rng = np.random.default_rng(0)
    with tf.Session() as sess:
        sess.run(init)
        sess.graph.finalize()
        for step in range(steps):
            hr = rng.random((batch, 64, 64, 3), dtype=np.float32)
            lr = hr.reshape(batch, 16, 4, 16, 4, 3).mean(axis=(2, 4))
            _, loss_value, summ = sess.run([train_op, loss, loss_summary], {lr_in: lr, hr_in: hr})
            writer.add_summary(summ, step)
            if step % 1000 == 0:
                sr_value = sess.run(sr, {lr_in: lr})
                grid = tile_progress(lr, sr_value, hr)
                writer.add_summary(sess.run(progress_summary, {progress_in: grid}), step)
                print(f"step {step}: loss {loss_value:.4f}")


if __name__ == "__main__":
    train()
