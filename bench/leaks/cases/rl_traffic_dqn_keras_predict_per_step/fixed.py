"""A traffic-light DQN agent calls Keras predict() on one state per simulation step and fit() on every replay batch

Source: https://github.com/AndreaVidali/Deep-QLearning-Agent-for-Traffic-Signal-Control/pull/40
Style: rl
Kind: Keras predict()/fit() in a loop: predict() on a single state at every simulation step, predict() twice and fit(epochs=1) on every sampled replay batch; each call sets up its own data adapter and execution function, and episodes slow down while host memory grows
"""
import random

import numpy as np
from tensorflow import keras


class QModel:
    def __init__(self, input_dim=80, output_dim=4, width=400, num_layers=4, lr=1e-3):
        self.input_dim, self.output_dim = input_dim, output_dim
        inputs = keras.Input(shape=(input_dim,))
        x = inputs
        for _ in range(num_layers):
            x = keras.layers.Dense(width, activation="relu")(x)
        outputs = keras.layers.Dense(output_dim, activation="linear")(x)
        self.model = keras.Model(inputs, outputs)
        self.model.compile(loss="mse", optimizer=keras.optimizers.Adam(learning_rate=lr))

    def predict_one(self, state):
        state = np.reshape(state, [1, self.input_dim])
        return self.model(state, training=False).numpy()

    def predict_batch(self, states):
        return self.model(states, training=False).numpy()

    def train_batch(self, states, q_targets):
        self.model.train_on_batch(states, q_targets)


class ReplayMemory:
    def __init__(self, size_max=50_000, size_min=600):
        self.samples, self.size_max, self.size_min = [], size_max, size_min

    def add(self, sample):
        self.samples.append(sample)
        if len(self.samples) > self.size_max:
            self.samples.pop(0)

    def sample(self, n):
        if len(self.samples) < self.size_min:
            return []
        return random.sample(self.samples, min(n, len(self.samples)))


class FakeIntersection:
    """Stands in for the SUMO simulation: returns a cell-occupancy state and a waiting-time reward."""

    def __init__(self, input_dim=80):
        self.input_dim = input_dim

    def reset(self):
        return np.zeros(self.input_dim, dtype=np.float32)

    def step(self, action):
        state = (np.random.rand(self.input_dim) < 0.2).astype(np.float32)
        return state, -float(state.sum()) * (1 + action % 2)


def run_episode(env, qmodel, memory, epsilon, max_steps=5400, green=10, gamma=0.75, batch=100, train_epochs=800):
    state = env.reset()
    for _ in range(0, max_steps, green):
        if random.random() < epsilon:
            action = random.randrange(qmodel.output_dim)
        else:
            action = int(np.argmax(qmodel.predict_one(state)))
        next_state, reward = env.step(action)
        memory.add((state, action, reward, next_state))
        state = next_state
    for _ in range(train_epochs):
        minibatch = memory.sample(batch)
        if not minibatch:
            continue
        states = np.array([s[0] for s in minibatch])
        next_states = np.array([s[3] for s in minibatch])
        q = qmodel.predict_batch(states)
        q_next = qmodel.predict_batch(next_states)
        for i, (_, a, r, _) in enumerate(minibatch):
            q[i, a] = r + gamma * np.amax(q_next[i])
        qmodel.train_batch(states, q)


if __name__ == "__main__":
    env, qmodel, memory = FakeIntersection(), QModel(), ReplayMemory()
    total = 100
    for episode in range(total):
        run_episode(env, qmodel, memory, epsilon=1.0 - episode / total)
        print(f"episode {episode} done")
    qmodel.model.save("trained_model.keras")
