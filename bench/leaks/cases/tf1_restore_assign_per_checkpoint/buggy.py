"""Rollout workers restore the learner's weights by building variable.assign(value) ops at every sync

Source: https://git.vimja.com/gryf/coach/commits/commit/b1e9ea48d86807382c5feca0d18a6bf71f5caa03/rl_coach/architectures/tensorflow_components/savers.py
Style: tf1-session
Kind: graph grows per restore: each sync adds one Assign op (plus a Const holding the weights) per variable
"""
import pickle
import time

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


class WeightSync:
    """Saves and restores every global variable of the policy network as a dict of numpy arrays."""

    def __init__(self, sess):
        self.sess = sess
        self.variables = tf.global_variables()

    def save(self, path):
        values = self.sess.run(self.variables)
        with open(path, "wb") as handle:
            pickle.dump({v.name: value for v, value in zip(self.variables, values)}, handle)

    def restore(self, path):
        with open(path, "rb") as handle:
            values = pickle.load(handle)
        for variable in self.variables:
            self.sess.run(variable.assign(values[variable.name]))  # leak: new:tf1-graph-growth


def policy_network(obs_dim, n_actions):
    obs = tf.placeholder(tf.float32, [None, obs_dim], name="obs")
    hidden = tf.layers.dense(obs, 256, activation=tf.nn.relu)
    hidden = tf.layers.dense(hidden, 256, activation=tf.nn.relu)
    return obs, tf.layers.dense(hidden, n_actions)


def rollout_worker(checkpoint_path, n_syncs=10_000, obs_dim=24, n_actions=6):
    rng = np.random.default_rng(0)
    obs, logits = policy_network(obs_dim, n_actions)
    action = tf.argmax(logits, axis=-1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver = WeightSync(sess)
        for sync in range(n_syncs):
            saver.restore(checkpoint_path)
            episode_actions = [sess.run(action, {obs: rng.standard_normal((1, obs_dim))}) for _ in range(100)]
            if sync % 100 == 0:
                print(f"sync {sync}: {len(sess.graph.get_operations())} ops in graph, last action {episode_actions[-1]}")
            time.sleep(0.01)


if __name__ == "__main__":
    rollout_worker("checkpoints/policy_latest.pkl")
