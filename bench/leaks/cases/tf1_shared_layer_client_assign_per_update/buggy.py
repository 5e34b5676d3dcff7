"""Parameter-server client (TF1): weights received from the server are written with a new assign op on every update

Source: https://github.com/tensorflow/tensorflow/issues/2311
Style: tf1-session
Kind: TF1 graph ops built inside the loop that runs the session: `sess.run(var.assign(new_value))` adds an assign node plus a constant holding the whole weight array to the graph at every sync, so device memory runs out after a few hundred syncs
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()

LAYER_SHAPES = [(2, 1000), (1000, 1000), (1000, 4)]


class SharedLayerClient:
    """One of several networks that share the hidden layers kept on a parameter server."""

    def __init__(self, task_id):
        self.task_id = task_id
        self.x = tf.placeholder(tf.float32, [None, LAYER_SHAPES[0][0]])
        self.y = tf.placeholder(tf.float32, [None, LAYER_SHAPES[-1][1]])
        self.weights, self.biases = [], []
        h = self.x
        for i, (n_in, n_out) in enumerate(LAYER_SHAPES):
            w = tf.get_variable(f"w{i}", [n_in, n_out], initializer=tf.glorot_uniform_initializer())
            b = tf.get_variable(f"b{i}", [n_out], initializer=tf.zeros_initializer())
            self.weights.append(w)
            self.biases.append(b)
            h = tf.matmul(h, w) + b
            if i < len(LAYER_SHAPES) - 1:
                h = tf.nn.relu(h)
        self.loss = tf.reduce_mean(tf.square(h - self.y))
        self.train_op = tf.train.GradientDescentOptimizer(1e-3).minimize(self.loss)
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())

    def load_from_server(self, new_weights, new_biases):
        for var, value in zip(self.weights + self.biases, new_weights + new_biases):
            self.sess.run(var.assign(value))  # leak: LL504

    def train_some(self, batches):
        for xb, yb in batches:
            self.sess.run(self.train_op, feed_dict={self.x: xb, self.y: yb})
        return self.sess.run(self.weights + self.biases)


def client_loop(server, task_id, rounds=100_000):
    client = SharedLayerClient(task_id)
    for r in range(rounds):
        new_w, new_b = server.pull(task_id)
        client.load_from_server(new_w, new_b)
        params = client.train_some(server.batches(task_id, n=4))
        server.push(task_id, params)
        if r % 100 == 0:
            print(f"client {task_id} round {r}: ops in graph = {len(client.sess.graph.get_operations())}")


def random_params():
    return ([np.random.randn(*s).astype(np.float32) for s in LAYER_SHAPES],
            [np.zeros(s[1], np.float32) for s in LAYER_SHAPES])
