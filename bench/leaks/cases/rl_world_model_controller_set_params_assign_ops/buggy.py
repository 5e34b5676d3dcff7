"""World-model agent (TF1): loading a parameter vector into the VAE/RNN builds fresh assign ops on every call

Source: https://github.com/hardmaru/WorldModelsExperiments/pull/14
Style: rl
Kind: TF1 graph ops built per call of a function run many times: `set_model_params` creates one `tf.assign` per variable every time an evolution-strategy worker loads a candidate or a checkpoint, so the graph (and the constants holding the weights) grows with every rollout batch
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()


class ConvVAE:
    def __init__(self, z_size=32, batch_size=1):
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.x = tf.placeholder(tf.float32, [None, 64, 64, 3])
            h = tf.layers.conv2d(self.x, 32, 4, strides=2, activation=tf.nn.relu, name="enc_conv1")
            h = tf.layers.conv2d(h, 64, 4, strides=2, activation=tf.nn.relu, name="enc_conv2")
            h = tf.layers.conv2d(h, 128, 4, strides=2, activation=tf.nn.relu, name="enc_conv3")
            h = tf.layers.flatten(h)
            self.mu = tf.layers.dense(h, z_size, name="enc_fc_mu")
            self.init = tf.global_variables_initializer()
        self.sess = tf.Session(graph=self.graph)
        self.sess.run(self.init)

    def encode(self, frames):
        return self.sess.run(self.mu, feed_dict={self.x: frames})

    def get_model_params(self):
        with self.graph.as_default():
            return [self.sess.run(v) for v in tf.trainable_variables()]

    def set_model_params(self, params):
        with self.graph.as_default():
            for var, value in zip(tf.trainable_variables(), params):
                self.sess.run(tf.assign(var, np.asarray(value, np.float32)))  # leak: LL504


def linear_controller(z, weights, bias):
    return np.tanh(z @ weights + bias)


def rollout(env, vae, weights, bias, max_steps=1000):
    obs, total = env.reset(), 0.0
    for _ in range(max_steps):
        z = vae.encode(obs[None].astype(np.float32) / 255.0)[0]
        obs, reward, done, _ = env.step(linear_controller(z, weights, bias))
        total += reward
        if done:
            break
    return total


def worker(env, vae, checkpoints, candidates, generations=2000):
    for gen in range(generations):
        vae.set_model_params(checkpoints[gen % len(checkpoints)])
        rewards = [rollout(env, vae, w, b) for w, b in candidates(gen)]
        print(f"generation {gen}: best {max(rewards):.1f}, graph ops {len(vae.graph.get_operations())}")
