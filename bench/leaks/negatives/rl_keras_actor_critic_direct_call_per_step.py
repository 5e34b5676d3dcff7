"""A Keras advantage actor-critic agent picks actions with a direct model call each step and updates with train_on_batch per rollout

Source: https://www.tensorflow.org/api_docs/python/tf/keras/Model#predict
Source: https://github.com/AndreaVidali/Deep-QLearning-Agent-for-Traffic-Signal-Control/pull/40
Style: rl
Kind: negative: resembles Keras predict() in a per-step loop (LL501) and fit() on one batch per update (fit-per-batch); the per-step inference is `model(obs, training=False)`, which the predict() documentation recommends for small inputs inside loops, and each update is a single train_on_batch call
"""
import gymnasium as gym
import numpy as np
import tensorflow as tf
from tensorflow import keras


def build_actor_critic(obs_dim, n_actions, width=128):
    obs = keras.Input((obs_dim,))
    h = keras.layers.Dense(width, activation="tanh")(obs)
    h = keras.layers.Dense(width, activation="tanh")(h)
    policy = keras.layers.Dense(n_actions, activation="softmax", name="policy")(h)
    value = keras.layers.Dense(1, name="value")(h)
    model = keras.Model(obs, [policy, value])
    model.compile(optimizer=keras.optimizers.Adam(7e-4),
                  loss={"policy": "sparse_categorical_crossentropy", "value": "mse"},
                  loss_weights={"policy": 1.0, "value": 0.5})
    return model


def discounted_returns(rewards, dones, bootstrap, gamma=0.99):
    out, running = np.zeros(len(rewards), dtype=np.float32), bootstrap
    for i in reversed(range(len(rewards))):
        running = rewards[i] + gamma * running * (1.0 - dones[i])
        out[i] = running
    return out


def train(total_updates=20_000, rollout=32):
    env = gym.make("CartPole-v1")
    model = build_actor_critic(env.observation_space.shape[0], env.action_space.n)
    obs, _ = env.reset(seed=0)
    episode_return, finished = 0.0, []
    for update in range(total_updates):
        states, actions, rewards, dones = [], [], [], []
        for _ in range(rollout):
            probs, _ = model(obs[None].astype(np.float32), training=False)
            action = int(np.random.choice(len(probs[0]), p=probs.numpy()[0]))
            next_obs, reward, terminated, truncated, _ = env.step(action)
            states.append(obs)
            actions.append(action)
            rewards.append(reward)
            dones.append(float(terminated))
            episode_return += reward
            obs = next_obs
            if terminated or truncated:
                finished.append(episode_return)
                episode_return = 0.0
                obs, _ = env.reset()
        _, last_value = model(obs[None].astype(np.float32), training=False)
        states = np.asarray(states, dtype=np.float32)
        returns = discounted_returns(rewards, dones, float(last_value[0, 0]))
        _, values = model(states, training=False)
        advantages = returns - values.numpy()[:, 0]
        model.train_on_batch(states, {"policy": np.asarray(actions), "value": returns[:, None]},
                             sample_weight={"policy": advantages,
                                            "value": np.ones_like(returns)})
        if update % 500 == 0 and finished:
            print(f"update {update}: mean return {np.mean(finished[-20:]):.1f}")
    return model


if __name__ == "__main__":
    tf.random.set_seed(0)
    train()
