"""TF1 regression with a TensorBoard monitor task that builds its image-summary ops every time it runs

Source: https://github.com/GPflow/GPflow/pull/1041
Style: tf1-session
Kind: TF1 graph ops built inside the loop that runs the session: the monitor's `run()` creates a new placeholder and a new `tf.summary.image` op on every call (every N optimisation steps), so the default graph and the session grow for the whole run and every step slows down
"""
import io

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def build_regressor(x_ph, hidden=64):
    h = tf.layers.dense(x_ph, hidden, activation=tf.nn.tanh, name="h1")
    h = tf.layers.dense(h, hidden, activation=tf.nn.tanh, name="h2")
    mean = tf.layers.dense(h, 1, name="mean")
    log_var = tf.layers.dense(h, 1, name="log_var")
    return mean, log_var


class PredictionImageTask:
    """Every `period` steps, plot the predictive band on a grid and write it to TensorBoard."""

    def __init__(self, writer, plot_fn, name="fit", period=200):
        self.writer = writer
        self.plot_fn = plot_fn
        self.name = name
        self.period = period

    def run(self, sess, step):
        if step % self.period:
            return
        fig = self.plot_fn(sess)
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
        buf.seek(0)
        image = plt.imread(buf)[None, ..., :3].astype(np.float32)
        image_ph = tf.placeholder(tf.float32, [1, None, None, 3])  # leak: LL504
        summary_op = tf.summary.image(self.name, image_ph)  # leak: LL504
        summary = sess.run(summary_op, feed_dict={image_ph: image})
        self.writer.add_summary(summary, step)


def make_plot_fn(x_ph, mean, log_var, x_train, y_train):
    grid = np.linspace(x_train.min() - 1, x_train.max() + 1, 400)[:, None].astype(np.float32)

    def plot(sess):
        mu, lv = sess.run([mean, log_var], feed_dict={x_ph: grid})
        sd = np.exp(0.5 * lv)
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot(x_train[:, 0], y_train[:, 0], "k.", ms=2)
        ax.plot(grid[:, 0], mu[:, 0], "C0")
        ax.fill_between(grid[:, 0], (mu - 2 * sd)[:, 0], (mu + 2 * sd)[:, 0], alpha=0.3)
        return fig

    return plot


def main(x_train, y_train, steps=50000, batch=256, logdir="logs/hetero_mlp"):
    x_ph = tf.placeholder(tf.float32, [None, 1])
    y_ph = tf.placeholder(tf.float32, [None, 1])
    mean, log_var = build_regressor(x_ph)
    nll = tf.reduce_mean(0.5 * log_var + 0.5 * tf.square(y_ph - mean) / tf.exp(log_var))
    train_op = tf.train.AdamOptimizer(1e-3).minimize(nll)
    loss_summary = tf.summary.scalar("nll", nll)
    writer = tf.summary.FileWriter(logdir)
    task = PredictionImageTask(writer, make_plot_fn(x_ph, mean, log_var, x_train, y_train))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(steps):
            idx = np.random.randint(0, len(x_train), batch)
            _, s = sess.run([train_op, loss_summary], feed_dict={x_ph: x_train[idx], y_ph: y_train[idx]})
            writer.add_summary(s, step)
            task.run(sess, step)
    writer.close()
