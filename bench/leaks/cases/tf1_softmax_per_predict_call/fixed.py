"""A predict helper wraps the logits in tf.nn.softmax on every call, so the serving graph grows

Source: https://github.com/lorserker/ben/pull/15
Style: tf1-session
Kind: graph grows per request: each predict() call adds a Softmax op to the loaded graph
"""
import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


class BiddingModel:
    """Loads a frozen bidding network once and answers many queries with it."""

    def __init__(self, checkpoint_prefix):
        self.graph = tf.Graph()
        self.sess = tf.Session(graph=self.graph)
        with self.graph.as_default():
            saver = tf.train.import_meta_graph(checkpoint_prefix + ".meta")
            saver.restore(self.sess, checkpoint_prefix)
            self.inputs = self.graph.get_tensor_by_name("bidder/features:0")
            self.keep_prob = self.graph.get_tensor_by_name("bidder/keep:0")
            self.logits = self.graph.get_tensor_by_name("bidder/logits:0")
            self.probabilities = tf.nn.softmax(self.logits)
        self.graph.finalize()

    def predict(self, features):
        return self.sess.run(self.probabilities, feed_dict={self.inputs: features, self.keep_prob: 1.0})


def encode_hand(rng):
    """Thirty-two card slots plus vulnerability and auction context, as floats."""
    return rng.integers(0, 2, size=(1, 8, 159)).astype(np.float32)


def simulate_deals(model, n_deals, rng):
    chosen = []
    for _ in range(n_deals):
        hand = encode_hand(rng)
        probs = model.predict(hand)
        chosen.append(int(np.argmax(probs[0, -1])))
    return chosen


if __name__ == "__main__":
    prefix = os.environ.get("BIDDER_CKPT", "models/bidder/bidder-final")
    model = BiddingModel(prefix)
    bids = simulate_deals(model, n_deals=100_000, rng=np.random.default_rng(7))
    print("most common bid:", max(set(bids), key=bids.count))
