"""TF1 image re-encoding job: one placeholder-fed encode op built before the loop, fed with each image

Source: https://github.com/tensorflow/tensorflow/issues/14185
Style: tf1-session
Kind: negative: resembles graph ops created per image in a session loop; the only ops are built once and each iteration just feeds a new array
"""
import glob
import os

import numpy as np
import tensorflow.compat.v1 as tf
from PIL import Image

tf.disable_v2_behavior()

THUMB = 128


class Reencoder:
    def __init__(self, quality=90):
        self.raw = tf.placeholder(tf.uint8, [None, None, 3], name="raw_image")
        resized = tf.image.resize(self.raw, [THUMB, THUMB], method="area")
        self.jpeg = tf.image.encode_jpeg(tf.cast(tf.round(resized), tf.uint8), quality=quality)
        self.sess = tf.Session()
        self.sess.graph.finalize()

    def __call__(self, image):
        return self.sess.run(self.jpeg, feed_dict={self.raw: image})

    def close(self):
        self.sess.close()


def main(src="photos", dst="thumbs"):
    os.makedirs(dst, exist_ok=True)
    encoder = Reencoder()
    paths = sorted(glob.glob(os.path.join(src, "*.png")))
    try:
        for index, path in enumerate(paths):
            image = np.asarray(Image.open(path).convert("RGB"))
            with open(os.path.join(dst, os.path.basename(path)[:-4] + ".jpg"), "wb") as out:
                out.write(encoder(image))
            if index % 500 == 0:
                print(f"{index}/{len(paths)}")
    finally:
        encoder.close()


if __name__ == "__main__":
    main()
