"""A TF2/Keras A2C agent calls model.predict() on one observation per environment step; RAM grows each episode

Source: https://github.com/inoryy/tensorflow2-deep-reinforcement-learning/issues/6
Style: rl
Kind: Keras predict() per step in a loop (through the model's action_value helper): memory climbs until OOM after ~800 episodes
"""
import gym
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers


class ProbabilityDistribution(keras.Model):
    def call(self, logits, **kwargs):
        return tf.squeeze(tf.random.categorical(logits, 1), axis=-1)


class ActorCritic(keras.Model):
    def __init__(self, num_actions):
        super().__init__("mlp_policy")
        self.hidden_logits = layers.Dense(128, activation="relu")
        self.hidden_values = layers.Dense(128, activation="relu")
        self.value = layers.Dense(1, name="value")
        self.logits = layers.Dense(num_actions, name="policy_logits")
        self.dist = ProbabilityDistribution()

    def call(self, inputs, **kwargs):
        x = tf.convert_to_tensor(inputs)
        return self.logits(self.hidden_logits(x)), self.value(self.hidden_values(x))

    def action_value(self, obs):
        logits, value = self.predict_on_batch(obs)
        action = self.dist.predict_on_batch(logits)
        return np.squeeze(action, axis=-1), np.squeeze(value, axis=-1)


class A2CAgent:
    def __init__(self, model, lr=7e-3, gamma=0.99, value_c=0.5, entropy_c=1e-4):
        self.model, self.gamma, self.value_c, self.entropy_c = model, gamma, value_c, entropy_c
        self.model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=lr),
                           loss=[self._logits_loss, self._value_loss])

    def _value_loss(self, returns, value):
        return self.value_c * keras.losses.mean_squared_error(returns, value)

    def _logits_loss(self, actions_and_advantages, logits):
        actions, advantages = tf.split(actions_and_advantages, 2, axis=-1)
        ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        policy_loss = ce(tf.cast(actions, tf.int32), logits, sample_weight=advantages)
        probs = tf.nn.softmax(logits)
        return policy_loss - self.entropy_c * keras.losses.categorical_crossentropy(probs, probs)

    def train(self, env, batch_sz=64, updates=250_000):
        actions = np.empty((batch_sz,), dtype=np.int32)
        rewards, dones, values = np.empty((3, batch_sz))
        observations = np.empty((batch_sz,) + env.observation_space.shape)
        next_obs, _ = env.reset()
        for update in range(updates):
            for step in range(batch_sz):
                observations[step] = next_obs.copy()
                actions[step], values[step] = self.model.action_value(next_obs[None, :])
                next_obs, rewards[step], terminated, truncated, _ = env.step(actions[step])
                dones[step] = terminated or truncated
                if dones[step]:
                    next_obs, _ = env.reset()
            _, next_value = self.model.action_value(next_obs[None, :])
            returns = np.append(np.zeros_like(rewards), next_value, axis=-1)
            for t in reversed(range(rewards.shape[0])):
                returns[t] = rewards[t] + self.gamma * returns[t + 1] * (1 - dones[t])
            returns = returns[:-1]
            advs = returns - values
            self.model.train_on_batch(observations, [np.concatenate([actions[:, None], advs[:, None]], axis=-1), returns])


if __name__ == "__main__":
    env = gym.make("MountainCar-v0")
    agent = A2CAgent(ActorCritic(env.action_space.n))
    agent.train(env)
