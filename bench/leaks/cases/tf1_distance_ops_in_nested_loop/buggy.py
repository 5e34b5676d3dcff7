"""Product-quantization encoder builds tf.multiply / tf.reduce_sum inside its triple loop

Source: https://github.com/tensorflow/tensorflow/issues/1439
Style: tf1-session
Kind: graph grows every inner iteration: new Mul and Sum ops per (image, sub-vector, centroid)
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

N_IMAGES = 128
N_SUBVECTORS = 96
N_CENTROIDS = 32
SUB_DIM = 4


def load_features(rng):
    """Stands in for the conv features that the report reads from a trained network."""
    return rng.standard_normal((N_IMAGES, N_SUBVECTORS * SUB_DIM)).astype(np.float32)


def load_codebook(rng):
    return rng.standard_normal((N_SUBVECTORS, N_CENTROIDS, SUB_DIM)).astype(np.float32)


def similarity_tables(features, codebook):
    left = tf.placeholder(tf.float32, shape=[SUB_DIM])
    right = tf.placeholder(tf.float32, shape=[SUB_DIM])
    tables = np.zeros((N_IMAGES, N_SUBVECTORS, N_CENTROIDS), dtype=np.float32)
    with tf.Session() as sess:
        for image in range(N_IMAGES):
            for sub in range(N_SUBVECTORS):
                segment = features[image, sub * SUB_DIM:(sub + 1) * SUB_DIM]
                for centroid in range(N_CENTROIDS):
                    dot = tf.reduce_sum(tf.multiply(left, right))  # leak: new:tf1-graph-growth
                    tables[image, sub, centroid] = sess.run(
                        dot, feed_dict={left: segment, right: codebook[sub, centroid]}
                    )
            if image % 16 == 0:
                print(f"encoded {image + 1}/{N_IMAGES} images")
    return tables


def main():
    rng = np.random.default_rng(3)
    features = load_features(rng)
    codebook = load_codebook(rng)
    tables = similarity_tables(features, codebook)
    codes = tables.argmax(axis=-1)
    np.save("pq_codes.npy", codes)
    print("codes shape:", codes.shape)


if __name__ == "__main__":
    main()
