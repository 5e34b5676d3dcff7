"""Dataset conversion script calls tf.image.encode_jpeg on each OpenCV image in graph mode

Source: https://github.com/tensorflow/tensorflow/issues/14185
Style: tf1-session
Kind: graph grows per image: every call adds an EncodeJpeg op and embeds the whole image as a Const node
"""
import glob
import os

import cv2
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def bytes_feature(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def int_feature(value):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def convert(image_dir, output_path, label_of):
    paths = sorted(glob.glob(os.path.join(image_dir, "*", "*.png")))
    with tf.Session() as sess, tf.python_io.TFRecordWriter(output_path) as writer:
        for index, path in enumerate(paths):
            image = cv2.cvtColor(cv2.imread(path), cv2.COLOR_BGR2RGB)
            encoded_op = tf.image.encode_jpeg(image, format="rgb", quality=92)  # leak: new:tf1-graph-growth
            encoded = sess.run(encoded_op)
            example = tf.train.Example(features=tf.train.Features(feature={
                "image/encoded": bytes_feature(encoded),
                "image/height": int_feature(image.shape[0]),
                "image/width": int_feature(image.shape[1]),
                "image/label": int_feature(label_of(path)),
            }))
            writer.write(example.SerializeToString())
            if index % 1000 == 0:
                print(f"{index}/{len(paths)} images written")


def class_index(path, classes=("cat", "dog", "other")):
    name = os.path.basename(os.path.dirname(path))
    return classes.index(name) if name in classes else len(classes) - 1


if __name__ == "__main__":
    convert("raw_images", "train.tfrecord", class_index)
