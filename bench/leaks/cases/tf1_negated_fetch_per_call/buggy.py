"""An actor-critic update fetches `-advantage` through sess.run, adding a Neg op per call

Source: https://github.com/tensorflow/tensorflow/issues/9646
Style: tf1-session
Kind: graph grows per training call: the unary minus on a graph tensor creates a new op each time it is evaluated
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


class ActorCritic:
    def __init__(self, obs_dim, n_actions, lr=1e-3):
        self.obs = tf.placeholder(tf.float32, [None, obs_dim])
        self.actions = tf.placeholder(tf.int32, [None])
        self.returns = tf.placeholder(tf.float32, [None])
        hidden = tf.layers.dense(self.obs, 64, activation=tf.nn.tanh)
        self.logits = tf.layers.dense(hidden, n_actions)
        self.value = tf.squeeze(tf.layers.dense(hidden, 1), -1)
        self.advantage = self.returns - self.value
        log_prob = -tf.nn.sparse_softmax_cross_entropy_with_logits(labels=self.actions, logits=self.logits)
        policy_loss = -tf.reduce_mean(log_prob * tf.stop_gradient(self.advantage))
        value_loss = tf.reduce_mean(tf.square(self.advantage))
        self.train_op = tf.train.AdamOptimizer(lr).minimize(policy_loss + 0.5 * value_loss)
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())

    def train(self, obs, actions, returns):
        feed = {self.obs: obs, self.actions: actions, self.returns: returns}
        neg_adv, _ = self.sess.run([-self.advantage, self.train_op], feed_dict=feed)  # leak: new:tf1-graph-growth
        return float(np.mean(neg_adv))


def rollout(rng, n=256, obs_dim=8, n_actions=4):
    obs = rng.standard_normal((n, obs_dim)).astype(np.float32)
    actions = rng.integers(0, n_actions, n)
    returns = rng.standard_normal(n).astype(np.float32)
    return obs, actions, returns


if __name__ == "__main__":
    rng = np.random.default_rng(5)
    agent = ActorCritic(obs_dim=8, n_actions=4)
    for update in range(50_000):
        mean_neg_adv = agent.train(*rollout(rng))
        if update % 1000 == 0:
            print(f"update {update}: mean -advantage {mean_neg_adv:.3f}")
