"""A TF1 U-Net segmentation trainer builds a new tf.train.Saver every time it writes a checkpoint

Source: https://github.com/jakeret/tf_unet/issues/290
Style: tf1-session
Kind: TF1 graph ops built inside the session loop: each Saver adds its save/restore ops for every variable to the default graph, so the graph, the exported .meta file and host memory grow with every checkpoint
"""
import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

TILE, N_CLASS = 256, 2


def conv_block(x, filters, name):
    with tf.variable_scope(name):
        x = tf.layers.conv2d(x, filters, 3, padding="same", activation=tf.nn.relu)
        return tf.layers.conv2d(x, filters, 3, padding="same", activation=tf.nn.relu)


def unet(x, depth=4, base=32):
    skips = []
    for d in range(depth):
        x = conv_block(x, base * 2 ** d, f"down{d}")
        skips.append(x)
        x = tf.layers.max_pooling2d(x, 2, 2)
    x = conv_block(x, base * 2 ** depth, "bottom")
    for d in reversed(range(depth)):
        x = tf.layers.conv2d_transpose(x, base * 2 ** d, 2, strides=2, padding="same")
        x = conv_block(tf.concat([skips[d], x], axis=-1), base * 2 ** d, f"up{d}")
    return tf.layers.conv2d(x, N_CLASS, 1)


def save_checkpoint(saver, sess, model_dir, epoch):
    return saver.save(sess, os.path.join(model_dir, "model.ckpt"), global_step=epoch)


def batches(images, masks, batch_size, rng):
    order = rng.permutation(len(images))
    for i in range(0, len(order) - batch_size + 1, batch_size):
        idx = order[i:i + batch_size]
        yield images[idx], masks[idx]


def train(images, masks, model_dir="unet_trained", epochs=300, batch_size=4):
    os.makedirs(model_dir, exist_ok=True)
    x = tf.placeholder(tf.float32, [None, TILE, TILE, 1], name="x")
    y = tf.placeholder(tf.int32, [None, TILE, TILE], name="y")
    logits = unet(x)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.MomentumOptimizer(0.2, 0.99).minimize(loss, global_step=step)
    pixel_acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), y), tf.float32))
    saver = tf.train.Saver(max_to_keep=3)
    init = tf.global_variables_initializer()
    rng = np.random.default_rng(0)
    with tf.Session() as sess:
        sess.run(init)
        for epoch in range(epochs):
            losses, accs = [], []
            for bx, by in batches(images, masks, batch_size, rng):
                _, l, a = sess.run([train_op, loss, pixel_acc], {x: bx, y: by})
                losses.append(l)
                accs.append(a)
            path = save_checkpoint(saver, sess, model_dir, epoch)
            print(f"epoch {epoch}: loss {np.mean(losses):.4f} acc {np.mean(accs):.4f} -> {path}")


if __name__ == "__main__":
    data = np.load("tiles.npz")
    train(data["images"][..., None].astype(np.float32), data["masks"].astype(np.int32))
