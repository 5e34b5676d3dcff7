"""Atari DQN in TensorFlow 1: the target network is synced by a helper that builds assign ops on every call

Source: https://github.com/dennybritz/reinforcement-learning/pull/99
Style: rl
Kind: graph grows per target update: copy_params() creates one tf.assign op per variable each time it is called from the training loop (every 10k steps), leaving disconnected sub-graphs in the default graph; memory builds up slowly over hundreds of thousands of steps (fixed by a copier object that builds the ops once)
"""
import collections
import random

import gym
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()

Transition = collections.namedtuple("Transition", "state action reward next_state done")
N_ACTIONS = 4


class QNetwork:
    def __init__(self, scope):
        self.scope = scope
        with tf.variable_scope(scope):
            self.frames = tf.placeholder(tf.uint8, [None, 84, 84, 4])
            self.targets = tf.placeholder(tf.float32, [None])
            self.actions = tf.placeholder(tf.int32, [None])
            x = tf.cast(self.frames, tf.float32) / 255.0
            x = tf.layers.conv2d(x, 32, 8, 4, activation=tf.nn.relu)
            x = tf.layers.conv2d(x, 64, 4, 2, activation=tf.nn.relu)
            x = tf.layers.conv2d(x, 64, 3, 1, activation=tf.nn.relu)
            x = tf.layers.dense(tf.layers.flatten(x), 512, activation=tf.nn.relu)
            self.q_values = tf.layers.dense(x, N_ACTIONS)
            picked = tf.reduce_sum(self.q_values * tf.one_hot(self.actions, N_ACTIONS), axis=1)
            self.loss = tf.reduce_mean(tf.squared_difference(self.targets, picked))
            self.train_op = tf.train.RMSPropOptimizer(0.00025, 0.99, 0.0, 1e-6).minimize(self.loss)

    def predict(self, sess, frames):
        return sess.run(self.q_values, {self.frames: frames})

    def update(self, sess, frames, actions, targets):
        loss, _ = sess.run([self.loss, self.train_op], {self.frames: frames, self.actions: actions, self.targets: targets})
        return loss


class ParamCopier:
    def __init__(self, source, target):
        src = sorted([v for v in tf.trainable_variables() if v.name.startswith(source.scope)], key=lambda v: v.name)
        dst = sorted([v for v in tf.trainable_variables() if v.name.startswith(target.scope)], key=lambda v: v.name)
        self.assign_ops = []
        for s, d in zip(src, dst):
            self.assign_ops.append(d.assign(s))

    def make(self, sess):
        sess.run(self.assign_ops)


def preprocess(frame):
    gray = frame.mean(axis=2)[34:194:2, ::2]
    return np.pad(gray, ((2, 2), (2, 2)), mode="edge").astype(np.uint8)[:84, :84]


def train(env, num_steps=5_000_000, replay_size=500_000, target_every=10_000, batch_size=32, gamma=0.99):
    q_net, target_net = QNetwork("q"), QNetwork("target_q")
    copier = ParamCopier(q_net, target_net)
    memory = collections.deque(maxlen=replay_size)
    eps_schedule = np.linspace(1.0, 0.1, 500_000)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        frame = preprocess(env.reset())
        state = np.stack([frame] * 4, axis=2)
        episode_reward = 0.0
        for t in range(num_steps):
            if t % target_every == 0:
                copier.make(sess)
            eps = eps_schedule[min(t, len(eps_schedule) - 1)]
            if random.random() < eps:
                action = random.randrange(N_ACTIONS)
            else:
                action = int(np.argmax(q_net.predict(sess, state[None])[0]))
            obs, reward, done, _ = env.step(action)
            next_state = np.append(state[:, :, 1:], preprocess(obs)[:, :, None], axis=2)
            memory.append(Transition(state, action, reward, next_state, done))
            episode_reward += reward
            state = next_state
            if done:
                print(f"step {t}: episode reward {episode_reward}")
                frame = preprocess(env.reset())
                state = np.stack([frame] * 4, axis=2)
                episode_reward = 0.0
            if len(memory) >= 50_000:
                batch = random.sample(memory, batch_size)
                states, actions, rewards, next_states, dones = map(np.array, zip(*batch))
                next_q = target_net.predict(sess, next_states).max(axis=1)
                targets = rewards + gamma * (1.0 - dones.astype(np.float32)) * next_q
                q_net.update(sess, states, actions, targets)


if __name__ == "__main__":
    train(gym.make("Breakout-v0"))
