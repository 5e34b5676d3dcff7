"""Beam-search decoder in a tf.function steps its RNN with a Python for loop over range(max_len)

Source: https://github.com/tensorflow/tensorflow/issues/38628
Style: tf2-loop
Kind: AutoGraph unrolls the Python loop (family autograph-unrolled-loop): every trace holds max_len copies of the decoder step, so the traced graph is tens of MB (and the first call takes minutes); a tf.range loop becomes one tf.while_loop
"""
import numpy as np
import tensorflow as tf

VOCAB = 8000
EMBED = 256
UNITS = 512
BEAM = 4
BOS, EOS = 1, 2


class BeamDecoder(tf.Module):
    def __init__(self, max_len=120):
        super().__init__()
        self.max_len = max_len
        self.embedding = tf.keras.layers.Embedding(VOCAB, EMBED)
        self.cell = tf.keras.layers.GRUCell(UNITS)
        self.project = tf.keras.layers.Dense(VOCAB)

    @tf.function
    def decode(self, encoder_state):
        batch = tf.shape(encoder_state)[0]
        state = tf.repeat(encoder_state, BEAM, axis=0)
        tokens = tf.fill([batch * BEAM], BOS)
        scores = tf.tile(tf.constant([0.0] + [-1e9] * (BEAM - 1)), [batch])
        outputs = tf.TensorArray(tf.int32, size=self.max_len)
        for t in tf.range(self.max_len):
            out, [state] = self.cell(self.embedding(tokens), [state])
            log_probs = tf.nn.log_softmax(self.project(out))
            total = tf.reshape(scores[:, None] + log_probs, [batch, BEAM * VOCAB])
            top_scores, top_ids = tf.math.top_k(total, k=BEAM)
            beam_ids = top_ids // VOCAB + tf.range(batch)[:, None] * BEAM
            tokens = tf.reshape(top_ids % VOCAB, [-1])
            state = tf.gather(state, tf.reshape(beam_ids, [-1]))
            scores = tf.reshape(top_scores, [-1])
            outputs = outputs.write(t, tokens)
        return tf.transpose(outputs.stack()), scores


def evaluate(decoder, encoder_states):
    lengths = []
    for start in range(0, len(encoder_states), 32):
        tokens, _ = decoder.decode(tf.constant(encoder_states[start:start + 32]))
        lengths.append(np.argmax(tokens.numpy() == EOS, axis=1).mean())
    return float(np.mean(lengths))


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    states = rng.standard_normal((4096, UNITS)).astype(np.float32)
    decoder = BeamDecoder()
    for epoch in range(10):
        print(f"epoch {epoch}: mean hypothesis length {evaluate(decoder, states):.1f}")
