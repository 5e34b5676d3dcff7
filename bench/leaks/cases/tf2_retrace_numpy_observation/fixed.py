"""DDPG agent's get_action() hands numpy states and Python floats (noise scale, action bound) to a @tf.function body

Source: https://github.com/keiohta/tf2rl/issues/99
Style: tf2-loop
Kind: tf.function retraces on Python arguments: `sigma` and `max_action` are Python floats and the state arrives as float64 numpy of varying rank, so calls keep re-tracing
"""
import numpy as np
import tensorflow as tf


class Actor(tf.keras.Model):
    def __init__(self, action_dim):
        super().__init__()
        self.l1 = tf.keras.layers.Dense(256, activation="relu")
        self.l2 = tf.keras.layers.Dense(256, activation="relu")
        self.out = tf.keras.layers.Dense(action_dim, activation="tanh")

    def call(self, states):
        return self.out(self.l2(self.l1(states)))


class DDPG:
    def __init__(self, state_dim, action_dim, max_action=1.0, sigma=0.3):
        self.actor = Actor(action_dim)
        self.actor(tf.zeros([1, state_dim]))
        self.max_action = max_action
        self.sigma = sigma
        self.state_dim = state_dim

    def get_action(self, state, test=False):
        is_single = state.ndim == 1
        state = state[None] if is_single else state
        sigma = 0.0 if test else self.sigma
        action = self._act_graph(
            tf.constant(state, dtype=tf.float32),
            tf.constant(sigma, dtype=tf.float32),
            tf.constant(self.max_action, dtype=tf.float32),
        )
        return action.numpy()[0] if is_single else action.numpy()

    @tf.function(reduce_retracing=True)
    def _act_graph(self, obs, noise_std, bound):
        action = self.actor(obs) * bound
        action += tf.random.normal(shape=tf.shape(action), stddev=noise_std)
        return tf.clip_by_value(action, -bound, bound)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    agent = DDPG(state_dim=17, action_dim=6)
    for episode in range(2000):
        state = rng.standard_normal(17)
        for t in range(1000):
            action = agent.get_action(state, test=(episode % 10 == 0))
            state = np.clip(state + 0.01 * rng.standard_normal(17), -5, 5)
            agent.sigma = max(0.05, agent.sigma * 0.99995)
        if episode % 50 == 0:
            print(episode, action[:3], agent.sigma)
