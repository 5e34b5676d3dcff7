"""Actor whose @tf.function is always called with tensors: Python floats and numpy states are converted first

Source: https://github.com/keiohta/tf2rl/pull/100
Style: tf2-loop
Kind: negative: resembles tf.function retracing on Python scalars; every argument is a float32 tensor of a fixed rank, so one trace serves all calls
"""
import numpy as np
import tensorflow as tf

STATE_DIM = 11
ACTION_DIM = 3


class GaussianActor(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.body = tf.keras.Sequential([tf.keras.layers.Dense(256, activation="relu"), tf.keras.layers.Dense(256, activation="relu")])
        self.mean = tf.keras.layers.Dense(ACTION_DIM, activation="tanh")

    def call(self, states):
        return self.mean(self.body(states))


class Agent:
    def __init__(self, max_action=2.0, noise=0.2):
        self.actor = GaussianActor()
        self.max_action = tf.constant(max_action, tf.float32)
        self.noise = noise

    @tf.function(input_signature=[tf.TensorSpec([None, STATE_DIM], tf.float32), tf.TensorSpec([], tf.float32)])
    def _act(self, states, noise_std):
        actions = self.actor(states) * self.max_action
        actions += tf.random.normal(tf.shape(actions), stddev=noise_std)
        return tf.clip_by_value(actions, -self.max_action, self.max_action)

    def act(self, state, explore=True):
        states = tf.convert_to_tensor(np.atleast_2d(state), dtype=tf.float32)
        noise = tf.constant(self.noise if explore else 0.0, tf.float32)
        return self._act(states, noise).numpy()[0]


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    agent = Agent()
    state = rng.standard_normal(STATE_DIM)
    for t in range(200_000):
        action = agent.act(state, explore=(t % 1000 != 0))
        state = np.tanh(state + 0.05 * rng.standard_normal(STATE_DIM) + 0.01 * action.sum())
        agent.noise = max(0.05, agent.noise * 0.99999)
        if t % 20_000 == 0:
            print(t, action, agent._act.experimental_get_tracing_count())
