"""A translation Transformer's train step declares an input_signature with None lengths, so variable-length batches share one trace

Source: https://github.com/tensorflow/tensorflow/issues/49151
Style: tf2-loop
Kind: negative: a tf.function called on batches of different sequence lengths (one trace, thanks to the input_signature)
"""
import tensorflow as tf

train_step_signature = [
    tf.TensorSpec(shape=(None, None), dtype=tf.int64),
    tf.TensorSpec(shape=(None, None), dtype=tf.int64),
]


class TinyTransformer(tf.keras.Model):
    def __init__(self, vocab=8000, d_model=128):
        super().__init__()
        self.src_emb = tf.keras.layers.Embedding(vocab, d_model)
        self.tgt_emb = tf.keras.layers.Embedding(vocab, d_model)
        self.enc = tf.keras.layers.MultiHeadAttention(num_heads=4, key_dim=32)
        self.dec = tf.keras.layers.MultiHeadAttention(num_heads=4, key_dim=32)
        self.cross = tf.keras.layers.MultiHeadAttention(num_heads=4, key_dim=32)
        self.out = tf.keras.layers.Dense(vocab)

    def call(self, src, tgt):
        s = self.src_emb(src)
        s = s + self.enc(s, s)
        t = self.tgt_emb(tgt)
        t = t + self.dec(t, t, use_causal_mask=True)
        return self.out(t + self.cross(t, s))


model = TinyTransformer()
optimizer = tf.keras.optimizers.Adam(1e-4)
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
train_loss = tf.keras.metrics.Mean(name="train_loss")


@tf.function(input_signature=train_step_signature)
def train_step(src, tgt):
    tgt_in, tgt_real = tgt[:, :-1], tgt[:, 1:]
    with tf.GradientTape() as tape:
        logits = model(src, tgt_in)
        mask = tf.cast(tf.not_equal(tgt_real, 0), logits.dtype)
        loss = tf.reduce_sum(loss_object(tgt_real, logits) * mask) / tf.reduce_sum(mask)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    train_loss(loss)


def batches(n, rng):
    for _ in range(n):
        src_len, tgt_len = rng.uniform((), 5, 60, tf.int32), rng.uniform((), 5, 60, tf.int32)
        yield (rng.uniform((64, src_len), 1, 8000, tf.int64), rng.uniform((64, tgt_len), 1, 8000, tf.int64))


if __name__ == "__main__":
    rng = tf.random.Generator.from_seed(0)
    for epoch in range(20):
        train_loss.reset_state()
        for src, tgt in batches(500, rng):
            train_step(src, tgt)
        print(f"epoch {epoch}: loss {train_loss.result():.4f}, traces {train_step.experimental_get_tracing_count()}")
