"""A policy-gradient agent re-compiles its Keras model with a new custom loss in every episode

Source: https://github.com/keras-team/keras/issues/9151
Style: keras-fit
Kind: Keras global state grows with every compile() in the loop (a new training graph and optimizer per episode); memory use climbs until OOM
"""
import gym
import numpy as np
from tensorflow import keras
from tensorflow.keras import backend as K


def build_policy(obs_dim, n_actions):
    model = keras.Sequential([
        keras.layers.Dense(64, activation="relu", input_shape=(obs_dim,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(n_actions, activation="softmax"),
    ])
    return model


def make_loss(advantages_mean, entropy_beta):
    def customized_loss(y_true, y_pred):
        log_prob = K.log(K.sum(y_true * y_pred, axis=-1) + 1e-8)
        entropy = -K.sum(y_pred * K.log(y_pred + 1e-8), axis=-1)
        return -K.mean(log_prob * advantages_mean) - entropy_beta * K.mean(entropy)
    return customized_loss


def run_episode(env, model, n_actions):
    obs, _ = env.reset()
    states, actions, rewards = [], [], []
    done = False
    while not done:
        probs = model(obs[None].astype("float32")).numpy()[0]
        action = np.random.choice(n_actions, p=probs)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        states.append(obs)
        actions.append(keras.utils.to_categorical(action, n_actions))
        rewards.append(reward)
        obs, done = next_obs, terminated or truncated
    return np.array(states), np.array(actions), np.array(rewards)


def main(episodes=5000):
    env = gym.make("CartPole-v1")
    n_actions = env.action_space.n
    model = build_policy(env.observation_space.shape[0], n_actions)
    for i in range(episodes):
        x, y, rewards = run_episode(env, model, n_actions)
        returns = np.cumsum(rewards[::-1])[::-1]
        advantage = float((returns - returns.mean()).mean() / (returns.std() + 1e-8))
        beta = max(0.01, 0.1 * (1 - i / episodes))
        weights = model.get_weights()
        K.clear_session()
        model = build_policy(env.observation_space.shape[0], n_actions)
        model.set_weights(weights)
        model.compile(loss=make_loss(advantage, beta), optimizer="rmsprop")
        model.fit(x, y, sample_weight=returns, verbose=0)
        if i % 100 == 0:
            print(i, rewards.sum())


if __name__ == "__main__":
    main()
