"""Greedy decoder in a tf.function iterates over tf.range and collects tokens in a TensorArray

Source: https://github.com/tensorflow/tensorflow/blob/master/tensorflow/python/autograph/g3doc/reference/control_flow.md
Style: tf2-loop
Kind: negative: resembles a per-step loop inside a tf.function that unrolls into a huge graph (and a Python list of per-step outputs); AutoGraph turns a loop over a tensor range into a single tf.while_loop and the TensorArray lives inside it, so the trace size does not depend on max_len
"""
import numpy as np
import tensorflow as tf

VOCAB = 5000
UNITS = 256
BOS = 1


class GreedyDecoder(tf.Module):
    def __init__(self):
        super().__init__()
        self.embedding = tf.keras.layers.Embedding(VOCAB, 128)
        self.cell = tf.keras.layers.LSTMCell(UNITS)
        self.project = tf.keras.layers.Dense(VOCAB)

    @tf.function(input_signature=[tf.TensorSpec([None, UNITS], tf.float32), tf.TensorSpec([], tf.int32)])
    def decode(self, context, max_len):
        batch = tf.shape(context)[0]
        h, c = context, tf.zeros_like(context)
        tokens = tf.fill([batch], BOS)
        outputs = tf.TensorArray(tf.int32, size=max_len)
        for t in tf.range(max_len):
            out, [h, c] = self.cell(self.embedding(tokens), [h, c])
            tokens = tf.argmax(self.project(out), axis=-1, output_type=tf.int32)
            outputs = outputs.write(t, tokens)
        return tf.transpose(outputs.stack())


def run(decoder, contexts, lengths):
    produced = 0
    for i, ctx in enumerate(contexts):
        ids = decoder.decode(tf.constant(ctx), tf.constant(lengths[i % len(lengths)], tf.int32))
        produced += int(tf.size(ids))
    return produced


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    decoder = GreedyDecoder()
    batches = [rng.standard_normal((int(rng.integers(8, 64)), UNITS)).astype(np.float32) for _ in range(2000)]
    total = run(decoder, batches, lengths=[16, 32, 64, 128, 256])
    print(f"decoded {total} tokens with {len(decoder.decode.pretty_printed_concrete_signatures().splitlines())} signature line(s)")
