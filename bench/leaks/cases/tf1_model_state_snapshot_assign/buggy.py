"""Ensemble dynamics model snapshots and restores its best weights with new assign ops on every epoch

Source: https://github.com/jannerm/mbpo/issues/27
Style: tf1-session
Kind: graph grows per epoch: _save_state/_set_state create Assign ops (and Const copies of the weights) each time they run
"""
import numpy as np
import tensorflow as tf


class DynamicsEnsemble:
    """A small probabilistic ensemble trained with early stopping on held-out loss."""

    def __init__(self, sess, obs_dim, act_dim, hidden=200, n_layers=4):
        self.sess = sess
        self.inputs = tf.placeholder(tf.float32, [None, obs_dim + act_dim])
        self.targets = tf.placeholder(tf.float32, [None, obs_dim + 1])
        net = self.inputs
        for _ in range(n_layers):
            net = tf.layers.dense(net, hidden, activation=tf.nn.swish)
        mean = tf.layers.dense(net, obs_dim + 1)
        self.loss = tf.reduce_mean(tf.square(mean - self.targets))
        self.train_op = tf.train.AdamOptimizer(1e-3).minimize(self.loss)
        self.weights = tf.trainable_variables()
        self._snapshot = None

    def _snapshot_weights(self):
        self._snapshot = self.sess.run(self.weights)

    def _restore_snapshot(self):
        ops = [var.assign(value) for var, value in zip(self.weights, self._snapshot)]  # leak: new:tf1-graph-growth
        self.sess.run(ops)

    def train(self, inputs, targets, holdout_inputs, holdout_targets, max_epochs=5, batch_size=256):
        best = np.inf
        for _ in range(max_epochs):
            order = np.random.permutation(len(inputs))
            for start in range(0, len(order), batch_size):
                idx = order[start:start + batch_size]
                self.sess.run(self.train_op, {self.inputs: inputs[idx], self.targets: targets[idx]})
            holdout = self.sess.run(self.loss, {self.inputs: holdout_inputs, self.targets: holdout_targets})
            if holdout < best:
                best = holdout
                self._snapshot_weights()
        self._restore_snapshot()
        return best


def collect_transitions(rng, n, obs_dim=11, act_dim=3):
    x = rng.standard_normal((n, obs_dim + act_dim)).astype(np.float32)
    y = rng.standard_normal((n, obs_dim + 1)).astype(np.float32)
    return x, y


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    with tf.Session() as sess:
        model = DynamicsEnsemble(sess, obs_dim=11, act_dim=3)
        sess.run(tf.global_variables_initializer())
        for env_epoch in range(1000):  # model is retrained after every environment epoch
            x, y = collect_transitions(rng, 5000)
            hx, hy = collect_transitions(rng, 500)
            print(env_epoch, model.train(x, y, hx, hy), len(sess.graph.get_operations()))
