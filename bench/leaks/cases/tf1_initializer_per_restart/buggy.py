"""Random-restart search re-initializes variables with sess.run(tf.global_variables_initializer()) each restart

Source: https://www.kdnuggets.com/2017/05/how-not-program-tensorflow-graph.html
Style: tf1-session
Kind: graph grows per restart: every tf.global_variables_initializer() call adds a new init op group to the graph
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

N_RESTARTS = 500
STEPS_PER_RESTART = 200


def build_matrix_factorization(ratings_shape, rank):
    ratings = tf.placeholder(tf.float32, ratings_shape)
    observed = tf.placeholder(tf.float32, ratings_shape)
    users = tf.Variable(tf.random_normal([ratings_shape[0], rank], stddev=0.1))
    items = tf.Variable(tf.random_normal([rank, ratings_shape[1]], stddev=0.1))
    reconstruction = tf.matmul(users, items)
    loss = tf.reduce_sum(observed * tf.square(reconstruction - ratings)) / tf.reduce_sum(observed)
    loss += 1e-3 * (tf.nn.l2_loss(users) + tf.nn.l2_loss(items))
    train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
    return ratings, observed, loss, train_op


def main():
    rng = np.random.default_rng(21)
    true_users = rng.standard_normal((300, 5))
    true_items = rng.standard_normal((5, 200))
    ratings_value = (true_users @ true_items).astype(np.float32)
    observed_value = (rng.random(ratings_value.shape) < 0.2).astype(np.float32)
    ratings, observed, loss, train_op = build_matrix_factorization(ratings_value.shape, rank=5)
    feed = {ratings: ratings_value, observed: observed_value}

    best = np.inf
    with tf.Session() as sess:
        for restart in range(N_RESTARTS):
            sess.run(tf.global_variables_initializer())  # leak: new:tf1-graph-growth
            for _ in range(STEPS_PER_RESTART):
                loss_value, _ = sess.run([loss, train_op], feed_dict=feed)
            best = min(best, loss_value)
            if restart % 25 == 0:
                print(f"restart {restart}: final loss {loss_value:.4f}, best {best:.4f}")


if __name__ == "__main__":
    main()
