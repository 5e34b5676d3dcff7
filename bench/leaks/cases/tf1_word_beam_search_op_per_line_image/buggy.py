"""Handwritten text recognition (TF1): the word-beam-search custom op is created for every line image inside the session loop

Source: https://github.com/githubharald/CTCWordBeamSearch/issues/5
Style: tf1-session
Kind: TF1 graph grows per image: `word_beam_search(...)` adds a new custom-op node (whose kernel builds its own dictionary and language model from the corpus) to the graph on every loop iteration; host memory fills after a few hundred images and the process is killed (exit 137)
"""
import glob

import cv2
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

CHARS = open("model/charList.txt").read()
WORD_CHARS = open("model/wordCharList.txt").read()
CORPUS = open("data/corpus.txt").read()
IMG_W, IMG_H, MAX_T = 128, 32, 32


def build_recognizer(inputs):
    x = tf.expand_dims(inputs, axis=3)
    for filters, pool in [(32, (2, 2)), (64, (2, 2)), (128, (1, 2)), (128, (1, 2)), (256, (1, 2))]:
        x = tf.layers.conv2d(x, filters, 5 if filters < 128 else 3, padding="same", activation=tf.nn.relu)
        x = tf.layers.max_pooling2d(x, pool, pool)
    x = tf.squeeze(x, axis=2)
    cells = [tf.nn.rnn_cell.LSTMCell(256) for _ in range(2)]
    stacked = tf.nn.rnn_cell.MultiRNNCell(cells)
    (fw, bw), _ = tf.nn.bidirectional_dynamic_rnn(stacked, stacked, x, dtype=tf.float32)
    rnn = tf.concat([fw, bw], axis=2)
    logits = tf.layers.dense(rnn, len(CHARS) + 1)
    return tf.transpose(logits, [1, 0, 2])  # T x B x C


def preprocess(path):
    img = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    h, w = img.shape
    f = min(IMG_W / w, IMG_H / h)
    img = cv2.resize(img, (max(1, int(w * f)), max(1, int(h * f))))
    canvas = np.full((IMG_H, IMG_W), 255, np.uint8)
    canvas[: img.shape[0], : img.shape[1]] = img
    canvas = canvas.T.astype(np.float32)
    return (canvas - canvas.mean()) / (canvas.std() + 1e-6)


def label_to_text(labels):
    blank = len(CHARS)
    out = []
    for label in labels:
        if label == blank:
            break
        out.append(CHARS[label])
    return "".join(out)


def main():
    wbs = tf.load_op_library("cpp/proj/TFWordBeamSearch.so")
    images_ph = tf.placeholder(tf.float32, [None, IMG_W, IMG_H])
    rnn_out = build_recognizer(images_ph)
    probs = tf.nn.softmax(rnn_out, axis=2)
    saver = tf.train.Saver()

    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint("model/"))
        with open("predictions.txt", "w") as out:
            for path in sorted(glob.glob("data/lines/*.png")):
                batch = np.stack([preprocess(path)])
                mat = sess.run(probs, {images_ph: batch})
                mat_ph = tf.placeholder(tf.float32, [None, None, len(CHARS) + 1])  # leak: LL504
                decode = wbs.word_beam_search(mat_ph, 25, "NGrams", 0.01, CORPUS.encode("utf8"), CHARS.encode("utf8"), WORD_CHARS.encode("utf8"))  # leak: LL504
                labels = sess.run(decode, {mat_ph: mat})
                out.write(f"{path}\t{label_to_text(labels[0])}\n")


if __name__ == "__main__":
    main()
