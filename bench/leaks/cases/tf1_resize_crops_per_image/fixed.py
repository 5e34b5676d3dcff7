"""Age/gender inference builds the multi-crop resize ops for every input image

Source: https://github.com/dpressel/rude-carnie/pull/47
Style: tf1-session
Kind: graph grows per image: resize_images, per_image_standardization and stack are added to the default graph on each call
"""
import sys

import numpy as np
import tensorflow as tf

CROP_SIZE = 227
CROPS = ((0, 0), (0, 29), (29, 0), (29, 29), (14, 14))


class CropMaker:
    """Decodes JPEG bytes and builds the crop batch with ops created once, fed per image."""

    def __init__(self, sess):
        self.sess = sess
        self.jpeg_in = tf.placeholder(tf.string)
        self.decoded = tf.image.decode_jpeg(self.jpeg_in, channels=3)
        self.patches_in = tf.placeholder(tf.uint8, [len(CROPS), None, None, 3])
        resized = tf.image.resize_images(self.patches_in, (CROP_SIZE, CROP_SIZE))
        standardized = tf.map_fn(tf.image.per_image_standardization, resized)
        flipped = tf.image.flip_left_right(standardized[-1])
        self.crop_batch = tf.concat([standardized, flipped[None]], axis=0)

    def decode(self, data):
        return self.sess.run(self.decoded, feed_dict={self.jpeg_in: data})

    def crops(self, patches):
        return self.sess.run(self.crop_batch, feed_dict={self.patches_in: patches})


def crop_batch_for(coder, filename):
    with open(filename, "rb") as handle:
        image = coder.decode(handle.read())
    patches = np.stack([image[top:top + 227, left:left + 227] for top, left in CROPS])
    return coder.crops(patches)


def classify(files, logits_fn):
    images = tf.placeholder(tf.float32, [None, CROP_SIZE, CROP_SIZE, 3])
    softmax = tf.nn.softmax(logits_fn(images))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        coder = CropMaker(sess)
        sess.graph.finalize()
        for filename in files:
            batch = crop_batch_for(coder, filename)
            probs = sess.run(softmax, feed_dict={images: batch}).mean(axis=0)
            print(filename, int(np.argmax(probs)), float(probs.max()))


def small_cnn(images, n_classes=8):
    net = tf.layers.conv2d(images, 48, 7, strides=4, activation=tf.nn.relu)
    net = tf.reduce_mean(net, axis=[1, 2])
    return tf.layers.dense(net, n_classes)


if __name__ == "__main__":
    classify(sys.argv[1:], small_cnn)
