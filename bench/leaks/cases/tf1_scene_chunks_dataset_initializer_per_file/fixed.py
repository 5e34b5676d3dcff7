"""Radar-scene inference script builds a new tf.data dataset (holding the chunk as a constant) and a new initializer for every chunk file

Source: https://github.com/tensorflow/tensorflow/issues/27414
Style: tf1-session
Kind: graph grows per chunk file: each from_tensor_slices(tf.constant(...)) embeds the whole chunk (10 scenes of 1536x1536x2 floats) in the default graph and each make_initializer adds one more op; none of them is ever released, so host memory grows by a chunk per file until the job dies
"""
import glob
import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

SCENE_SHAPE = [1536, 1536, 2]
SCENES_PER_CHUNK = 10


def despeckle_net(scene):
    net = tf.expand_dims(scene, 0)
    for width in (32, 64, 64, 32):
        net = tf.layers.conv2d(net, width, 3, padding="same", activation=tf.nn.relu)
    residual = tf.layers.conv2d(net, SCENE_SHAPE[-1], 3, padding="same")
    return tf.squeeze(tf.expand_dims(scene, 0) - residual, 0)


def coherence_map(clean):
    power = tf.reduce_sum(tf.square(clean), axis=-1)
    return power / (tf.reduce_max(power) + 1e-6)


def run_inference(chunk_dir, ckpt_path, out_dir):
    scenes_ph = tf.placeholder(tf.float32, [None] + SCENE_SHAPE, name="scene_chunk")
    chunk = tf.data.Dataset.from_tensor_slices(scenes_ph)
    iterator = tf.data.Iterator.from_structure(output_types=tf.float32, output_shapes=SCENE_SHAPE)
    init_chunk = iterator.make_initializer(chunk)
    scene = iterator.get_next()
    clean = despeckle_net(scene)
    coherence = coherence_map(clean)
    saver = tf.train.Saver()
    os.makedirs(out_dir, exist_ok=True)

    with tf.Session() as sess:
        saver.restore(sess, ckpt_path)
        for chunk_path in sorted(glob.glob(os.path.join(chunk_dir, "*.npy"))):
            scenes = np.load(chunk_path).astype(np.float32)
            sess.run(init_chunk, feed_dict={scenes_ph: scenes})
            results = []
            for _ in range(SCENES_PER_CHUNK):
                results.append(sess.run(coherence))
            name = os.path.splitext(os.path.basename(chunk_path))[0]
            np.save(os.path.join(out_dir, f"{name}_coherence.npy"), np.stack(results))
            print(f"{name}: mean coherence {np.mean(results):.4f}")


if __name__ == "__main__":
    run_inference("data/scene_chunks", "checkpoints/despeckle.ckpt", "outputs/coherence")
