"""Question-answering model's run_epoch() creates tf.no_op() whenever it is called for validation

Source: https://github.com/barronalex/Dynamic-Memory-Networks-in-TensorFlow/issues/16
Style: tf1-session
Kind: graph grows per validation epoch: a NoOp node is added to the graph each time run_epoch runs without a train op
"""
import numpy as np
import tensorflow as tf


class Config:
    embed_size = 80
    hidden_size = 80
    vocab_size = 400
    max_len = 20
    batch_size = 64
    dropout = 0.9
    max_epochs = 256


class QAReader:
    def __init__(self, config):
        self.config = config
        self.questions = tf.placeholder(tf.int32, [None, config.max_len])
        self.answers = tf.placeholder(tf.int64, [None])
        self.dropout_keep = tf.placeholder(tf.float32, [])
        embeddings = tf.get_variable("embeddings", [config.vocab_size, config.embed_size])
        encoded = tf.reduce_mean(tf.nn.embedding_lookup(embeddings, self.questions), axis=1)
        hidden = tf.nn.dropout(tf.layers.dense(encoded, config.hidden_size, tf.nn.relu), self.dropout_keep)
        logits = tf.layers.dense(hidden, config.vocab_size)
        self.loss_op = tf.losses.sparse_softmax_cross_entropy(self.answers, logits)
        self.pred = tf.argmax(logits, axis=1)
        self.train_step = tf.train.AdamOptimizer(1e-3).minimize(self.loss_op)
        self.eval_step = tf.no_op()  # created once, reused by every validation epoch
        tf.summary.scalar("loss", self.loss_op)
        self.summaries = tf.summary.merge_all()

    def run_pass(self, session, data, train_op=None):
        keep = self.config.dropout
        if train_op is None:
            train_op = self.eval_step
            keep = 1.0
        questions, answers = data
        losses = []
        for start in range(0, len(questions), self.config.batch_size):
            feed = {
                self.questions: questions[start:start + self.config.batch_size],
                self.answers: answers[start:start + self.config.batch_size],
                self.dropout_keep: keep,
            }
            loss, _, _ = session.run([self.loss_op, self.summaries, train_op], feed_dict=feed)
            losses.append(loss)
        return float(np.mean(losses))


def synthetic_split(rng, config, n):
    questions = rng.integers(0, config.vocab_size, (n, config.max_len)).astype(np.int32)
    return questions, questions[:, 0].astype(np.int64)


if __name__ == "__main__":
    cfg = Config()
    rng = np.random.default_rng(4)
    train_data, valid_data = synthetic_split(rng, cfg, 2000), synthetic_split(rng, cfg, 400)
    model = QAReader(cfg)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.graph.finalize()
        for epoch in range(cfg.max_epochs):
            train_loss = model.run_pass(sess, train_data, train_op=model.train_step)
            valid_loss = model.run_pass(sess, valid_data)
            print(f"epoch {epoch}: train {train_loss:.3f} valid {valid_loss:.3f}")
