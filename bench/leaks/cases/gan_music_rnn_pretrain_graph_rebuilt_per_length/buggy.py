"""Recurrent music GAN (TF1): pre-training rebuilds the whole model graph each time the sequence length grows

Source: https://github.com/olofmogren/c-rnn-gan/issues/2
Style: gan
Kind: TF1 graph ops built inside the training loop: whenever curriculum pre-training lengthens the sequences, a new generator/discriminator graph (and optimizer) is added to the default graph; every session.run of the epoch loop leaks more RAM until the process runs out of memory
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()

NUM_FEATURES = 4
HIDDEN = 350


def build_model(seq_len, batch_size, reuse):
    with tf.variable_scope("crnngan", reuse=reuse):
        noise = tf.placeholder(tf.float32, [batch_size, seq_len, NUM_FEATURES], name="noise")
        real = tf.placeholder(tf.float32, [batch_size, seq_len, NUM_FEATURES], name="real")
        with tf.variable_scope("G"):
            g_cell = tf.nn.rnn_cell.LSTMCell(HIDDEN)
            g_out, _ = tf.nn.dynamic_rnn(g_cell, noise, dtype=tf.float32)
            fake = tf.layers.dense(g_out, NUM_FEATURES, name="g_proj")
        with tf.variable_scope("D"):
            d_cell = tf.nn.rnn_cell.LSTMCell(HIDDEN)
            d_real, _ = tf.nn.dynamic_rnn(d_cell, real, dtype=tf.float32)
        with tf.variable_scope("D", reuse=True):
            d_fake, _ = tf.nn.dynamic_rnn(d_cell, fake, dtype=tf.float32)
        logit_real = tf.layers.dense(d_real[:, -1], 1, name="d_real_head")
        logit_fake = tf.layers.dense(d_fake[:, -1], 1, name="d_real_head", reuse=True)
        pretrain_loss = tf.reduce_mean(tf.square(fake - real))
        g_vars = [v for v in tf.trainable_variables() if "/G/" in v.name]
        pretrain_op = tf.train.AdamOptimizer(1e-3).minimize(pretrain_loss, var_list=g_vars)
        d_loss = tf.reduce_mean(tf.nn.softplus(-logit_real) + tf.nn.softplus(logit_fake))
    return dict(noise=noise, real=real, pretrain_loss=pretrain_loss,
                pretrain_op=pretrain_op, d_loss=d_loss)


def sample_batch(songs, seq_len, batch_size):
    idx = np.random.randint(0, len(songs), batch_size)
    starts = [np.random.randint(0, max(1, len(songs[i]) - seq_len)) for i in idx]
    return np.stack([songs[i][s:s + seq_len] for i, s in zip(idx, starts)]).astype(np.float32)


def pretrain(songs, epochs=60, batch_size=20, start_len=8, max_len=256, grow_every=5):
    seq_len = start_len
    model = build_model(seq_len, batch_size, reuse=False)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    for epoch in range(epochs):
        if epoch > 0 and epoch % grow_every == 0 and seq_len < max_len:
            seq_len = min(seq_len * 2, max_len)
            model = build_model(seq_len, batch_size, reuse=True)  # leak: LL504
            sess.run(tf.variables_initializer([v for v in tf.global_variables()  # leak: LL504
                                               if "Adam" in v.name or "beta" in v.name]))
        for _ in range(100):
            batch = sample_batch(songs, seq_len, batch_size)
            noise = np.random.uniform(size=batch.shape).astype(np.float32)
            loss, _ = sess.run([model["pretrain_loss"], model["pretrain_op"]],
                               feed_dict={model["noise"]: noise, model["real"]: batch})
        print(f"epoch {epoch} len {seq_len}: pretrain loss {loss:.4f}")
    return sess, model
