"""cosine_decay_restarts is constructed inside the while loop to read the current learning rate

Source: https://github.com/tensorflow/tensorflow/issues/10408
Style: tf1-session
Kind: graph grows every step: a whole learning-rate schedule sub-graph is added per iteration until the OOM killer fires
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

BASE_LR = 3e-3
RESTART_PERIOD = 2000
MIN_LR_FRACTION = 0.05
WARM_STEPS = 500
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
    lr_in = tf.placeholder(tf.float32, [])
    step_in = tf.placeholder(tf.int64, [])
    loss, train_op = build_regressor(features, targets, lr_in)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        step = 0
        data = batches(rng)
        while step < TOTAL_STEPS:
            schedule_lr = tf.train.cosine_decay_restarts(  # leak: new:tf1-graph-growth
                learning_rate=BASE_LR,
                global_step=step_in,
                first_decay_steps=RESTART_PERIOD,
                alpha=MIN_LR_FRACTION,
            )
            lr = sess.run(schedule_lr, feed_dict={step_in: max(0, step - WARM_STEPS)})
            x, y = next(data)
            loss_value, _ = sess.run([loss, train_op], feed_dict={features: x, targets: y, lr_in: lr})
            if step % 1000 == 0:
                print(f"step {step} lr {lr:.5f} loss {loss_value:.4f}")
            step += 1


if __name__ == "__main__":
    main()
