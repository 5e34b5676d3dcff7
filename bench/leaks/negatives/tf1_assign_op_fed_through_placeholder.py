"""TF1 parameter-server client: new weights from the server are loaded through assign ops built once and fed via placeholders

Source: https://github.com/tensorflow/tensorflow/issues/4151
Style: tf1-session
Kind: negative: resembles tf.assign called inside the session loop to change variable values (TF1 graph growth); the assign ops and their placeholders are created once when the client is built, the graph is finalized, and the loop only runs them with new feed values
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


class WorkerClient:
    def __init__(self, layer_sizes=((2, 1000), (1000, 1000), (1000, 4)), lr=1e-3):
        self.x = tf.placeholder(tf.float32, [None, layer_sizes[0][0]])
        self.y = tf.placeholder(tf.float32, [None, layer_sizes[-1][1]])
        self.weights, h = [], self.x
        for i, (n_in, n_out) in enumerate(layer_sizes):
            w = tf.get_variable(f"w{i}", [n_in, n_out])
            b = tf.get_variable(f"b{i}", [n_out], initializer=tf.zeros_initializer())
            self.weights += [w, b]
            h = tf.matmul(h, w) + b
            if i < len(layer_sizes) - 1:
                h = tf.nn.relu(h)
        self.loss = tf.reduce_mean(tf.square(h - self.y))
        self.train_op = tf.train.GradientDescentOptimizer(lr).minimize(self.loss)
        self.new_values = [tf.placeholder(v.dtype.base_dtype, v.shape) for v in self.weights]
        self.load_ops = [tf.assign(v, p) for v, p in zip(self.weights, self.new_values)]
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())
        self.sess.graph.finalize()

    def load_server_weights(self, arrays):
        self.sess.run(self.load_ops, feed_dict=dict(zip(self.new_values, arrays)))

    def local_steps(self, batches):
        losses = []
        for bx, by in batches:
            _, l = self.sess.run([self.train_op, self.loss], {self.x: bx, self.y: by})
            losses.append(l)
        return float(np.mean(losses)), self.sess.run(self.weights)


def fake_server_round(client_weights, noise=1e-3, rng=np.random.default_rng(0)):
    return [w + noise * rng.standard_normal(w.shape).astype(w.dtype) for w in client_weights]


if __name__ == "__main__":
    client = WorkerClient()
    rng = np.random.default_rng(1)
    weights = client.sess.run(client.weights)
    for rnd in range(100_000):
        client.load_server_weights(fake_server_round(weights))
        batches = [(rng.standard_normal((64, 2)), rng.standard_normal((64, 4))) for _ in range(10)]
        loss, weights = client.local_steps(batches)
        if rnd % 500 == 0:
            print(f"round {rnd}: loss {loss:.4f}")
