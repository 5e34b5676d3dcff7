"""A long-running inference service: a keras.Model subclass scores each job through a method that calls self.predict()

Source: https://github.com/tensorflow/tensorflow/issues/46661
Style: keras-fit
Kind: Keras predict() once per job of a service loop, called on the model itself from a method of its keras.Model subclass: every call builds a tf.data pipeline and host memory grows job after job (calling the model directly does not grow)
"""
import numpy as np
import tensorflow as tf

TILE = 256


class TileClassifier(tf.keras.Model):
    def __init__(self, n_classes=5):
        super().__init__()
        self.backbone = tf.keras.applications.VGG16(include_top=False, weights=None, input_shape=(TILE, TILE, 3))
        self.pool = tf.keras.layers.GlobalAveragePooling2D()
        self.head = tf.keras.layers.Dense(n_classes, activation="softmax")

    def call(self, inputs, training=False):
        return self.head(self.pool(self.backbone(inputs, training=training)))

    def score_tile(self, tile):
        probs = self(tile[None], training=False).numpy()
        return int(probs[0].argmax()), float(probs[0].max())


def incoming_jobs(rng, n=100_000):
    """The service's requests: one tile to classify per job, until it is restarted."""
    for job in range(n):
        yield job, rng.random((TILE, TILE, 3), dtype=np.float32)


if __name__ == "__main__":
    model = TileClassifier()
    for job, tile in incoming_jobs(np.random.default_rng(0)):
        label, confidence = model.score_tile(tile)
        if job % 1000 == 0:
            print(job, label, round(confidence, 3))
