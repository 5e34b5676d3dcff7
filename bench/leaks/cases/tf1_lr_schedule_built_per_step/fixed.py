"""cosine_decay_restarts is constructed inside the while loop to read the current learning rate

Source: https://github.com/tensorflow/tensorflow/issues/10408
Style: tf1-session
Kind: graph grows every step: a whole learning-rate schedule sub-graph is added per iteration until the OOM killer fires
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

LEARNING_RATE = 3e-3
LR_DECAY_STEPS = 2000
LEARNING_RATE_ALPHA = 0.05
DECAY_START = 500
TOTAL_STEPS = 200_000


def build_regressor(features, targets, learning_rate):
    hidden = tf.layers.dense(features, 256, activation=tf.nn.relu)
    prediction = tf.squeeze(tf.layers.dense(hidden, 1), axis=-1)
    loss = tf.losses.mean_squared_error(targets, prediction)
    train_op = tf.train.MomentumOptimizer(learning_rate, momentum=0.9).minimize(loss)
    return loss, train_op


def batches(rng, batch_size=256, dim=40):
    weights = rng.standard_normal(dim)
    while True:
        x = rng.standard_normal((batch_size, dim)).astype(np.float32)
        yield x, (x @ weights).astype(np.float32)


def main():
    rng = np.random.default_rng(11)
    features = tf.placeholder(tf.float32, [None, 40])
    targets = tf.placeholder(tf.float32, [None])
    cur_step = tf.placeholder(tf.int64, [])
    decayed = tf.train.cosine_decay_restarts(
        learning_rate=LEARNING_RATE,
        global_step=cur_step,
        first_decay_steps=LR_DECAY_STEPS,
        alpha=LEARNING_RATE_ALPHA,
    )
    loss, train_op = build_regressor(features, targets, decayed)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.graph.finalize()
        step = 0
        data = batches(rng)
        while step < TOTAL_STEPS:
            x, y = next(data)
            lr, loss_value, _ = sess.run(
                [decayed, loss, train_op],
                feed_dict={features: x, targets: y, cur_step: max(0, step - DECAY_START)},
            )
            if step % 1000 == 0:
                print(f"step {step} lr {lr:.5f} loss {loss_value:.4f}")
            step += 1


if __name__ == "__main__":
    main()
