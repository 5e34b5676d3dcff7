"""Detector training loop pushes recall/precision/mAP into summary variables with tf.assign each log step

Source: https://github.com/YunYang1994/tensorflow-yolov3/issues/42
Style: tf1-session
Kind: graph grows every log step: three new Assign ops (each embedding a Python float constant) per sess.run
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

STEPS = 60_000
LOG_EVERY = 20


def detector_head(images, is_training):
    net = tf.layers.conv2d(images, 32, 3, strides=2, activation=tf.nn.leaky_relu)
    net = tf.layers.batch_normalization(net, training=is_training)
    net = tf.layers.conv2d(net, 64, 3, strides=2, activation=tf.nn.leaky_relu)
    return tf.layers.conv2d(net, 3 * (5 + 20), 1)


def evaluate_batch(raw_output, rng):
    """Placeholder for the NMS + matching code that yields detection statistics on the host."""
    recall = float(rng.uniform(0.3, 0.9))
    precision = float(rng.uniform(0.3, 0.9))
    return recall, precision, (recall + precision) / 2


def main():
    rng = np.random.default_rng(0)
    images = tf.placeholder(tf.float32, [None, 416, 416, 3])
    targets = tf.placeholder(tf.float32, [None, 104, 104, 75])
    is_training = tf.placeholder(tf.bool, [])
    output = detector_head(images, is_training)
    loss = tf.reduce_mean(tf.square(output - targets))
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = tf.train.AdamOptimizer(1e-4).minimize(loss)

    recall_var = tf.Variable(0.0, trainable=False, name="recall")
    precall_var = tf.Variable(0.0, trainable=False, name="precision")
    map_var = tf.Variable(0.0, trainable=False, name="mAP")
    tf.summary.scalar("loss", loss)
    tf.summary.scalar("recall", recall_var)
    tf.summary.scalar("precision", precall_var)
    tf.summary.scalar("mAP", map_var)
    summary_op = tf.summary.merge_all()

    with tf.Session() as sess:
        writer = tf.summary.FileWriter("logs/detector", sess.graph)
        sess.run(tf.global_variables_initializer())
        for step in range(STEPS):
            x = rng.random((4, 416, 416, 3), dtype=np.float32)
            y = rng.random((4, 104, 104, 75), dtype=np.float32)
            raw, _ = sess.run([output, train_op], feed_dict={images: x, targets: y, is_training: True})
            if step % LOG_EVERY == 0:
                rec, prec, m_ap = evaluate_batch(raw, rng)
                _, _, _, summary = sess.run(
                    [
                        tf.assign(recall_var, rec),  # leak: new:tf1-graph-growth
                        tf.assign(precall_var, prec),  # leak: new:tf1-graph-growth
                        tf.assign(map_var, m_ap),  # leak: new:tf1-graph-growth
                        summary_op,
                    ],
                    feed_dict={images: x, targets: y, is_training: True},
                )
                writer.add_summary(summary, step)


if __name__ == "__main__":
    main()
