"""Object-detector training with tf.estimator: train() and evaluate() alternate in a Python loop, so the training graph is rebuilt for every cycle

Source: https://github.com/google/automl/pull/742
Source: https://github.com/tensorflow/tensorflow/issues/20699
Style: tf1-session
Kind: a graph and input pipeline rebuilt per cycle: each `estimator.train(..., max_steps=...)` call in the loop builds a new graph, a new session and a new input_fn pipeline, restores the checkpoint and keeps part of it around; host memory grows cycle after cycle (fix, recommended by the TF team in the PR: one `tf.estimator.train_and_evaluate` call, which builds the training graph once)
"""
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()


def make_input_fn(file_pattern, is_training, batch_size=64, image_size=512):
    def parse(record):
        feats = tf.io.parse_single_example(record, {
            "image/encoded": tf.io.FixedLenFeature([], tf.string),
            "image/class": tf.io.FixedLenFeature([], tf.int64),
        })
        image = tf.image.decode_jpeg(feats["image/encoded"], channels=3)
        image = tf.image.resize(image, [image_size, image_size]) / 255.0
        return image, feats["image/class"]

    def input_fn(params=None):
        files = tf.data.Dataset.list_files(file_pattern, shuffle=is_training)
        ds = files.interleave(tf.data.TFRecordDataset, cycle_length=8)
        if is_training:
            ds = ds.shuffle(2048).repeat()
        return ds.map(parse, num_parallel_calls=8).batch(batch_size, drop_remainder=is_training).prefetch(2)

    return input_fn


def model_fn(features, labels, mode, params):
    net = features
    for filters in (32, 64, 128, 256):
        net = tf.layers.conv2d(net, filters, 3, strides=2, padding="same", activation=tf.nn.relu)
    logits = tf.layers.dense(tf.reduce_mean(net, axis=[1, 2]), params["num_classes"])
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == tf.estimator.ModeKeys.EVAL:
        acc = tf.metrics.accuracy(labels, tf.argmax(logits, -1))
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": acc})
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.MomentumOptimizer(params["lr"], 0.9).minimize(loss, global_step=step)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main(train_pattern, val_pattern, model_dir, num_epochs=300, steps_per_epoch=1000, eval_steps=100):
    config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=steps_per_epoch)
    estimator = tf.estimator.Estimator(model_fn, config=config, params={"num_classes": 90, "lr": 0.08})
    train_input_fn = make_input_fn(train_pattern, is_training=True)
    eval_input_fn = make_input_fn(val_pattern, is_training=False)
    for cycle in range(num_epochs):
        estimator.train(train_input_fn, max_steps=(cycle + 1) * steps_per_epoch)  # leak: new:estimator-per-cycle
        results = estimator.evaluate(eval_input_fn, steps=eval_steps)
        tf.logging.info("cycle %d: %s", cycle, results)
