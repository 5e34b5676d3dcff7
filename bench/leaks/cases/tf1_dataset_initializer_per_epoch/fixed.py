"""Point-cloud segmentation training rebuilds its tf.data pipelines and iterator initializers inside the epoch loop

Source: https://github.com/EnyaHermite/SPH3D-GCN/issues/6
Style: tf1-session
Kind: graph grows per epoch: every epoch adds a new dataset pipeline (with a 10000-element shuffle buffer) and a new iterator initializer op to the default graph; the old pipelines are never released, so host memory fills up at the start of each epoch until the process is killed
"""
import glob

import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

NUM_POINTS = 8192
NUM_CLASSES = 13
BATCH_SIZE = 16
SHUFFLE_BUFFER = 10000


def parse_example(record):
    feats = tf.parse_single_example(record, {
        "xyz": tf.FixedLenFeature([NUM_POINTS * 3], tf.float32),
        "label": tf.FixedLenFeature([NUM_POINTS], tf.int64),
    })
    return tf.reshape(feats["xyz"], [NUM_POINTS, 3]), tf.cast(feats["label"], tf.int32)


def build_model(xyz, labels, is_training):
    net = tf.layers.dense(xyz, 64, tf.nn.relu)
    net = tf.layers.dense(net, 128, tf.nn.relu)
    global_feat = tf.reduce_max(net, axis=1, keepdims=True)
    net = tf.concat([net, tf.tile(global_feat, [1, NUM_POINTS, 1])], axis=-1)
    net = tf.layers.dropout(net, 0.5, training=is_training)
    logits = tf.layers.dense(net, NUM_CLASSES)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), labels), tf.float32))
    return loss, correct


def train(trainlist, testlist, max_epoch=300):
    iterator = tf.data.Iterator.from_structure(
        (tf.float32, tf.int32), (tf.TensorShape([BATCH_SIZE, NUM_POINTS, 3]), tf.TensorShape([BATCH_SIZE, NUM_POINTS])))
    xyz, labels = iterator.get_next()
    is_training = tf.placeholder(tf.bool, [])
    loss, correct = build_model(xyz, labels, is_training)
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
    trainset = tf.data.TFRecordDataset(trainlist).map(parse_example, 4).shuffle(SHUFFLE_BUFFER).batch(BATCH_SIZE, True)
    init_train_iterator = iterator.make_initializer(trainset)
    testset = tf.data.TFRecordDataset(testlist).map(parse_example, 4).batch(BATCH_SIZE, True)
    init_test_iterator = iterator.make_initializer(testset)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(max_epoch):
            sess.run(init_train_iterator)
            total_loss, batches = 0.0, 0
            while True:
                try:
                    loss_val, _ = sess.run([loss, train_op], {is_training: True})
                except tf.errors.OutOfRangeError:
                    break
                total_loss, batches = total_loss + loss_val, batches + 1

            sess.run(init_test_iterator)
            total_correct, seen = 0.0, 0
            while True:
                try:
                    total_correct += sess.run(correct, {is_training: False})
                    seen += BATCH_SIZE * NUM_POINTS
                except tf.errors.OutOfRangeError:
                    break
            print(f"epoch {epoch}: train loss {total_loss / max(batches, 1):.4f} eval acc {total_correct / max(seen, 1):.4f}")


if __name__ == "__main__":
    train(sorted(glob.glob("data/s3dis/train_*.tfrecord")), sorted(glob.glob("data/s3dis/test_*.tfrecord")))
