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
    # One op for a whole image: [subvectors, dim] x [subvectors, centroids, dim] -> [subvectors, centroids]
    segments = tf.placeholder(tf.float32, shape=[N_SUBVECTORS, SUB_DIM])
    centroids = tf.placeholder(tf.float32, shape=[N_SUBVECTORS, N_CENTROIDS, SUB_DIM])
    dots = tf.einsum("sd,scd->sc", segments, centroids)
    tables = np.zeros((N_IMAGES, N_SUBVECTORS, N_CENTROIDS), dtype=np.float32)
    with tf.Session() as sess:
        sess.graph.finalize()
        for image in range(N_IMAGES):
            segment_rows = features[image].reshape(N_SUBVECTORS, SUB_DIM)
            tables[image] = sess.run(dots, feed_dict={segments: segment_rows, centroids: codebook})
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
