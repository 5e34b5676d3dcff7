"""Object-detector data augmentation builds its TensorFlow ops in the default graph for every batch

Source: https://github.com/apple/turicreate/pull/2728
Style: tf1-session
Kind: graph grows per batch: the crop/flip/resize ops (and constants holding the images) are added to the default graph on every call; a fresh tf.Graph per batch fixes it
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def random_crop_boxes(boxes, crop):
    y0, x0, y1, x1 = crop
    h, w = y1 - y0, x1 - x0
    shifted = (boxes - np.array([y0, x0, y0, x0])) / np.array([h, w, h, w])
    return np.clip(shifted, 0.0, 1.0)


def get_augmented_data(images, annotations, output_height, output_width):
    tf.logging.set_verbosity(tf.logging.ERROR)
    session = tf.Session()
    image_batch = tf.constant(images, dtype=tf.float32)  # leak: new:tf1-graph-growth
    flipped = tf.image.random_flip_left_right(image_batch[0])  # leak: new:tf1-graph-growth
    crops = np.array([[0.05, 0.05, 0.95, 0.95]] * len(images), dtype=np.float32)
    resized = tf.image.crop_and_resize(image_batch, crops, np.arange(len(images)), [output_height, output_width])  # leak: new:tf1-graph-growth
    jittered = tf.image.random_brightness(resized, 0.1)  # leak: new:tf1-graph-growth
    out_images, _ = session.run([jittered, flipped])
    out_boxes = [random_crop_boxes(np.asarray(a, dtype=np.float32).reshape(-1, 4), crops[i]) for i, a in enumerate(annotations)]
    return out_images, out_boxes


def batches(n_batches, batch_size=32, size=416, rng=None):
    rng = rng or np.random.default_rng(0)
    for _ in range(n_batches):
        images = rng.random((batch_size, size, size, 3), dtype=np.float32)
        annotations = [rng.random((int(rng.integers(1, 6)), 4)).astype(np.float32) for _ in range(batch_size)]
        yield images, annotations


def train(num_iterations=20000):
    for step, (images, annotations) in enumerate(batches(num_iterations)):
        aug_images, aug_boxes = get_augmented_data(images, annotations, 416, 416)
        if step % 100 == 0:
            print(step, aug_images.shape, sum(len(b) for b in aug_boxes),
                  len(tf.get_default_graph().get_operations()))


if __name__ == "__main__":
    train()
