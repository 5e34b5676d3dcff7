"""Distributed rollout worker reloads the learner's newest checkpoint through a helper that builds a tf.train.Saver every time

Source: https://github.com/IntelLabs/coach/pull/161
Style: tf1-session
Kind: graph grows per policy reload: every tf.train.Saver() adds save/restore ops for all variables to the default graph and none is ever freed; the worker reloads after every batch of episodes, so its memory keeps growing until it crashes
"""
import os
import time

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

OBS_DIM = 4
NUM_ACTIONS = 2
EPISODES_PER_ROUND = 8


class CartPoleStub:
    """Tiny stand-in for the simulator the worker talks to."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.state = None
        self.t = 0

    def reset(self):
        self.state, self.t = self.rng.uniform(-0.05, 0.05, OBS_DIM), 0
        return self.state

    def step(self, action):
        self.t += 1
        self.state = self.state + 0.02 * (action - 0.5) + 0.01 * self.rng.standard_normal(OBS_DIM)
        done = abs(self.state[2]) > 0.2 or self.t >= 200
        return self.state, 1.0, done


def q_network(obs):
    with tf.variable_scope("online"):
        h = tf.layers.dense(obs, 64, tf.nn.relu)
        h = tf.layers.dense(h, 64, tf.nn.relu)
        return tf.layers.dense(h, NUM_ACTIONS)


def restore_policy(sess, saver, checkpoint_dir):
    path = tf.train.latest_checkpoint(checkpoint_dir)
    if path is None:
        return None
    saver.restore(sess, path)
    return path


class RolloutWorker:
    def __init__(self, checkpoint_dir, experience_dir, seed=0):
        self.checkpoint_dir = checkpoint_dir
        self.experience_dir = experience_dir
        self.env = CartPoleStub(seed)
        self.obs_ph = tf.placeholder(tf.float32, [None, OBS_DIM])
        self.q_values = q_network(self.obs_ph)
        self.saver = tf.train.Saver(var_list=tf.global_variables("online"))
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())

    def play_episode(self, epsilon):
        obs, done, transitions = self.env.reset(), False, []
        while not done:
            if np.random.rand() < epsilon:
                action = np.random.randint(NUM_ACTIONS)
            else:
                action = int(np.argmax(self.sess.run(self.q_values, {self.obs_ph: obs[None]})[0]))
            next_obs, reward, done = self.env.step(action)
            transitions.append((obs, action, reward, next_obs, done))
            obs = next_obs
        return transitions

    def run(self, rounds=100000, epsilon=0.05):
        os.makedirs(self.experience_dir, exist_ok=True)
        last = None
        for round_id in range(rounds):
            current = restore_policy(self.sess, self.saver, self.checkpoint_dir)
            if current is None or current == last:
                time.sleep(1.0)
            last = current
            episodes = [self.play_episode(epsilon) for _ in range(EPISODES_PER_ROUND)]
            np.save(os.path.join(self.experience_dir, f"round_{round_id:06d}.npy"),
                    np.array([len(ep) for ep in episodes]))
            print(f"round {round_id}: policy {current}, mean length {np.mean([len(ep) for ep in episodes]):.1f}")


if __name__ == "__main__":
    RolloutWorker("shared/checkpoints", "shared/experience").run()
