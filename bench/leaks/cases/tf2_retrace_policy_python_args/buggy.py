"""Multi-agent executor passes Python objects (a dict of numpy observations, an epsilon float) to its @tf.function policy

Source: https://github.com/instadeepai/Mava/issues/346
Style: tf2-loop
Kind: tf.function retraces on Python arguments: a decaying Python epsilon and per-step dicts of numpy arrays give a new trace signature per call; RAM grows until the process is killed
"""
import numpy as np
import tensorflow as tf

N_AGENTS = 3
OBS_DIM = 16
N_ACTIONS = 5


class EpsilonGreedyActors:
    def __init__(self):
        self.heads = {
            f"agent_{i}": tf.keras.Sequential([
                tf.keras.layers.Dense(64, activation="relu", input_shape=(OBS_DIM,)),
                tf.keras.layers.Dense(N_ACTIONS),
            ])
            for i in range(N_AGENTS)
        }

    @tf.function
    def _act(self, agent, observation, legal_actions, epsilon):
        q_values = self.heads[agent](observation[None])[0]
        q_values = tf.where(legal_actions > 0, q_values, -1e9)
        greedy = tf.argmax(q_values, output_type=tf.int32)
        random = tf.random.categorical(tf.math.log(legal_actions[None]), 1, dtype=tf.int32)[0, 0]
        return tf.where(tf.random.uniform([]) < epsilon, random, greedy)

    def choose(self, observations, legal, epsilon):
        return {
            agent: int(self._act(agent, observations[agent], legal[agent], epsilon))  # leak: new:tf-function-retrace
            for agent in observations
        }


def environment_step(rng):
    observations = {f"agent_{i}": rng.standard_normal(OBS_DIM).astype(np.float32) for i in range(N_AGENTS)}
    legal = {agent: (rng.random(N_ACTIONS) > 0.2).astype(np.float32) + 1e-6 for agent in observations}
    return observations, legal


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    executor = EpsilonGreedyActors()
    epsilon = 1.0
    for t in range(1_000_000):
        observations, legal = environment_step(rng)
        actions = executor.choose(observations, legal, epsilon)
        epsilon = max(0.05, epsilon * 0.9999)
        if t % 10_000 == 0:
            print(t, epsilon, actions)
