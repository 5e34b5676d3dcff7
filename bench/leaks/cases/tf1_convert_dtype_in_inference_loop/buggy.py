"""Virtual try-on test script converts each person image with tf.image.convert_image_dtype inside the loop

Source: https://github.com/xthan/VITON/issues/35
Style: tf1-session
Kind: graph grows per test pair: convert_image_dtype and resize ops (with the image as a constant) are added for every sample, until out of memory
"""
import os

import numpy as np
import tensorflow as tf
from PIL import Image

HEIGHT, WIDTH = 256, 192


def generator_net(person, clothes):
    net = tf.concat([person, clothes], axis=-1)
    net = tf.layers.conv2d(net, 64, 4, strides=2, padding="same", activation=tf.nn.relu)
    net = tf.layers.conv2d_transpose(net, 3, 4, strides=2, padding="same")
    return tf.tanh(net)


def load_pairs(list_path):
    with open(list_path) as handle:
        return [line.split() for line in handle if line.strip()]


def main(data_dir="data/test", out_dir="results"):
    os.makedirs(out_dir, exist_ok=True)
    person_in = tf.placeholder(tf.float32, [1, HEIGHT, WIDTH, 3])
    clothes_in = tf.placeholder(tf.float32, [1, HEIGHT, WIDTH, 3])
    fake = generator_net(person_in, clothes_in)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for person_name, clothes_name in load_pairs(os.path.join(data_dir, "pairs.txt")):
            person = np.asarray(Image.open(os.path.join(data_dir, person_name)))
            clothes = np.asarray(Image.open(os.path.join(data_dir, clothes_name)))
            person_t = tf.image.resize_images(tf.image.convert_image_dtype(person, tf.float32), [HEIGHT, WIDTH])  # leak: new:tf1-graph-growth
            clothes_t = tf.image.resize_images(tf.image.convert_image_dtype(clothes, tf.float32), [HEIGHT, WIDTH])  # leak: new:tf1-graph-growth
            person_v, clothes_v = sess.run([person_t, clothes_t])
            result = sess.run(fake, feed_dict={person_in: person_v[None] * 2 - 1, clothes_in: clothes_v[None] * 2 - 1})
            image = ((result[0] + 1) * 127.5).clip(0, 255).astype(np.uint8)
            Image.fromarray(image).save(os.path.join(out_dir, f"{person_name[:-4]}_{clothes_name}"))


if __name__ == "__main__":
    main()
