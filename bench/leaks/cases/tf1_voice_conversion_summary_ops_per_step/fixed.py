"""CycleGAN voice conversion: train.py asks the model for its summary ops on every training step

Source: https://github.com/onejiin/CycleGAN-VC2/issues/4
Style: tf1-session
Kind: graph grows every step: model.summary() builds new tf.summary scalar/merge ops each time it is called from the training loop; training gets slower and slower
"""
import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


class CycleGAN2:
    def __init__(self, num_features=36, frames=128, log_dir="./log"):
        self.input_A = tf.placeholder(tf.float32, [None, num_features, frames], name="input_A")
        self.input_B = tf.placeholder(tf.float32, [None, num_features, frames], name="input_B")
        self.lr = tf.placeholder(tf.float32, None, name="lr")
        self.fake_B = self.generator(self.input_A, "g_A2B")
        self.cycle_A = self.generator(self.fake_B, "g_B2A")
        self.fake_A = self.generator(self.input_B, "g_B2A", reuse=True)
        self.cycle_B = self.generator(self.fake_A, "g_A2B", reuse=True)
        d_fake_B = self.discriminator(self.fake_B, "d_B")
        d_real_B = self.discriminator(self.input_B, "d_B", reuse=True)
        cycle = tf.reduce_mean(tf.abs(self.input_A - self.cycle_A)) + tf.reduce_mean(tf.abs(self.input_B - self.cycle_B))
        self.generator_loss = tf.reduce_mean((1 - d_fake_B) ** 2) + 10 * cycle
        self.discriminator_loss = tf.reduce_mean((1 - d_real_B) ** 2) + tf.reduce_mean(d_fake_B ** 2)
        g_vars = [v for v in tf.trainable_variables() if v.name.startswith("g_")]
        d_vars = [v for v in tf.trainable_variables() if v.name.startswith("d_")]
        self.g_opt = tf.train.AdamOptimizer(self.lr, beta1=0.5).minimize(self.generator_loss, var_list=g_vars)
        self.d_opt = tf.train.AdamOptimizer(self.lr, beta1=0.5).minimize(self.discriminator_loss, var_list=d_vars)
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())
        self.writer = tf.summary.FileWriter(log_dir, self.sess.graph)
        self.train_step = 0
        self.generator_summaries, self.discriminator_summaries = self.summary()

    @staticmethod
    def generator(x, scope, reuse=False):
        with tf.variable_scope(scope, reuse=reuse):
            h = tf.layers.conv1d(tf.transpose(x, [0, 2, 1]), 128, 15, padding="same", activation=tf.nn.relu)
            h = tf.layers.conv1d(h, 256, 5, padding="same", activation=tf.nn.relu)
            return tf.transpose(tf.layers.conv1d(h, x.shape[1], 15, padding="same"), [0, 2, 1])

    @staticmethod
    def discriminator(x, scope, reuse=False):
        with tf.variable_scope(scope, reuse=reuse):
            h = tf.layers.conv2d(x[..., None], 64, 3, 2, padding="same", activation=tf.nn.leaky_relu)
            return tf.layers.dense(tf.layers.flatten(h), 1)

    def summary(self):
        with tf.name_scope("generator_summaries"):
            g = tf.summary.merge([tf.summary.scalar("generator_loss", self.generator_loss)])
        with tf.name_scope("discriminator_summaries"):
            d = tf.summary.merge([tf.summary.scalar("discriminator_loss", self.discriminator_loss)])
        return g, d

    def train(self, input_A, input_B, lr):
        feed = {self.input_A: input_A, self.input_B: input_B, self.lr: lr}
        g_loss, _, g_sum = self.sess.run([self.generator_loss, self.g_opt, self.generator_summaries], feed)
        d_loss, _, d_sum = self.sess.run([self.discriminator_loss, self.d_opt, self.discriminator_summaries], feed)
        self.writer.add_summary(g_sum, self.train_step)
        self.writer.add_summary(d_sum, self.train_step)
        self.train_step += 1
        return g_loss, d_loss


if __name__ == "__main__":
    model = CycleGAN2(log_dir=os.environ.get("LOG_DIR", "./log"))
    rng = np.random.default_rng(0)
    for epoch in range(5000):
        for i in range(100):
            a = rng.standard_normal((1, 36, 128)).astype(np.float32)
            b = rng.standard_normal((1, 36, 128)).astype(np.float32)
            g_loss, d_loss = model.train(a, b, lr=2e-4)
        print(f"epoch {epoch}: g {g_loss:.4f} d {d_loss:.4f}")
