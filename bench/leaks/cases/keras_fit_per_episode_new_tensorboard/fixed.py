"""RL loop calls model.fit(epochs=1) once per episode with a TensorBoard callback constructed inside the loop

Source: https://github.com/keras-team/keras/issues/9935
Style: keras-fit
Kind: callbacks constructed once per episode (family callbacks-per-epoch): every fit gets a new TensorBoard callback with its own writers and event file, none of them ever closed
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras

EPISODES = 5000
GAMMA = 0.95


def build_q_network(state_dim, n_actions):
    model = keras.Sequential([
        keras.Input((state_dim,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(n_actions),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return model


def play_episode(model, rng, state_dim=8, n_actions=4, steps=200):
    states = rng.standard_normal((steps, state_dim)).astype(np.float32)
    q_values = model(states, training=False).numpy()
    actions = q_values.argmax(axis=1)
    rewards = rng.standard_normal(steps).astype(np.float32)
    targets = q_values.copy()
    next_best = np.roll(q_values.max(axis=1), -1)
    targets[np.arange(steps), actions] = rewards + GAMMA * next_best
    return states, targets, float(rewards.sum())


def main():
    rng = np.random.default_rng(0)
    model = build_q_network(8, 4)
    writer = tf.summary.create_file_writer("logs/dqn")  # one writer for the whole run: one continuous curve
    for episode in range(EPISODES):
        states, targets, episode_return = play_episode(model, rng)
        losses = [model.train_on_batch(states[i:i + 32], targets[i:i + 32]) for i in range(0, len(states), 32)]
        with writer.as_default():
            tf.summary.scalar("loss", float(np.mean(losses)), step=episode)
            tf.summary.scalar("return", episode_return, step=episode)
        if episode % 100 == 0:
            print(f"episode {episode}: return {episode_return:.2f}")
    writer.close()


if __name__ == "__main__":
    main()
