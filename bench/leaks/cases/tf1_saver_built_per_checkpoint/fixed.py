"""GAIL/TRPO training loop checkpoints through a save_state helper that builds a new tf.train.Saver on every call

Source: https://github.com/andrewliao11/gail-tf/issues/11
Source: https://github.com/andrewliao11/gail-tf/pull/12
Style: tf1-session
Kind: graph grows per checkpoint: each tf.train.Saver() adds save/restore ops (one per variable) to the default graph, so the graph and the .meta file written with every checkpoint keep growing while training runs
"""
import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

OBS_DIM = 11
ACT_DIM = 3


def get_session():
    return tf.get_default_session()


_SAVER_CACHE = {}


def save_state(fname):
    os.makedirs(os.path.dirname(fname), exist_ok=True)
    graph = tf.get_default_graph()
    if graph not in _SAVER_CACHE:
        _SAVER_CACHE[graph] = tf.train.Saver()
    _SAVER_CACHE[graph].save(get_session(), fname)


def build_policy(obs_ph):
    with tf.variable_scope("pi"):
        h = tf.layers.dense(obs_ph, 64, tf.nn.tanh)
        h = tf.layers.dense(h, 64, tf.nn.tanh)
        mean = tf.layers.dense(h, ACT_DIM)
        logstd = tf.get_variable("logstd", [1, ACT_DIM], initializer=tf.zeros_initializer())
    with tf.variable_scope("vf"):
        v = tf.layers.dense(tf.layers.dense(obs_ph, 64, tf.nn.tanh), 1)[:, 0]
    return mean, logstd, v


def build_discriminator(obs_ph, act_ph, reuse=False):
    with tf.variable_scope("adversary", reuse=reuse):
        h = tf.layers.dense(tf.concat([obs_ph, act_ph], axis=1), 100, tf.nn.tanh)
        return tf.layers.dense(h, 1)[:, 0]


def learn(expert_obs, expert_act, max_iters=100000, save_per_iter=100, ckpt_dir="checkpoint/gail"):
    obs_ph = tf.placeholder(tf.float32, [None, OBS_DIM])
    act_ph = tf.placeholder(tf.float32, [None, ACT_DIM])
    adv_ph = tf.placeholder(tf.float32, [None])
    ret_ph = tf.placeholder(tf.float32, [None])
    mean, logstd, v = build_policy(obs_ph)
    logp = -0.5 * tf.reduce_sum(tf.square((act_ph - mean) / tf.exp(logstd)) + 2 * logstd, axis=1)
    pi_loss = -tf.reduce_mean(logp * adv_ph)
    vf_loss = tf.reduce_mean(tf.square(v - ret_ph))
    train_pi = tf.train.AdamOptimizer(3e-4).minimize(pi_loss + 0.5 * vf_loss)

    gen_logits = build_discriminator(obs_ph, act_ph)
    exp_obs_ph = tf.placeholder(tf.float32, [None, OBS_DIM])
    exp_act_ph = tf.placeholder(tf.float32, [None, ACT_DIM])
    exp_logits = build_discriminator(exp_obs_ph, exp_act_ph, reuse=True)
    d_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=gen_logits, labels=tf.zeros_like(gen_logits))) + \
        tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=exp_logits, labels=tf.ones_like(exp_logits)))
    train_d = tf.train.AdamOptimizer(3e-4).minimize(d_loss, var_list=tf.trainable_variables("adversary"))
    reward = -tf.log(1 - tf.nn.sigmoid(gen_logits) + 1e-8)

    rng = np.random.default_rng(0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for iters_so_far in range(max_iters):
            obs = rng.standard_normal((1024, OBS_DIM)).astype(np.float32)
            act = sess.run(mean, {obs_ph: obs}) + 0.1 * rng.standard_normal((1024, ACT_DIM))
            rew = sess.run(reward, {obs_ph: obs, act_ph: act})
            ret = np.cumsum(rew[::-1])[::-1] * 0.01
            values = sess.run(v, {obs_ph: obs})
            sess.run(train_pi, {obs_ph: obs, act_ph: act, adv_ph: ret - values, ret_ph: ret})
            idx = rng.integers(0, len(expert_obs), 1024)
            sess.run(train_d, {obs_ph: obs, act_ph: act, exp_obs_ph: expert_obs[idx], exp_act_ph: expert_act[idx]})
            if iters_so_far % save_per_iter == 0:
                save_state(os.path.join(ckpt_dir, "gail_iter"))
                print(f"iter {iters_so_far}: mean reward {rew.mean():.4f}")


if __name__ == "__main__":
    learn(np.random.randn(50000, OBS_DIM).astype(np.float32), np.random.randn(50000, ACT_DIM).astype(np.float32))
