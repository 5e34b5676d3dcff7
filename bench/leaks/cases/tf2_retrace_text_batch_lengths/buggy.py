"""Text classifier's batched predict_proba wraps the model in tf.function(reduce_retracing=True) and still leaks on new lengths

Source: https://github.com/France-Travail/gabarit/pull/174
Style: tf2-loop
Kind: tf.function retraces on varying sequence lengths: reduce_retracing relaxes shapes only after several traces, and each trace keeps its graph; the fix pins an input_signature
"""
import numpy as np
import tensorflow as tf

MAX_VOCAB = 20_000


class TextClassifier:
    def __init__(self, n_classes=12):
        self.model = tf.keras.Sequential([
            tf.keras.layers.Embedding(MAX_VOCAB, 128, mask_zero=True),
            tf.keras.layers.Bidirectional(tf.keras.layers.GRU(64)),
            tf.keras.layers.Dense(n_classes, activation="softmax"),
        ])
        self._serve = tf.function(self.model, reduce_retracing=True)  # leak: new:tf-function-retrace

    def tokenize(self, texts):
        ids = [[hash(word) % (MAX_VOCAB - 1) + 1 for word in text.split()] for text in texts]
        width = max(len(seq) for seq in ids)
        return np.array([seq + [0] * (width - len(seq)) for seq in ids], dtype=np.int32)

    def predict_proba(self, texts, batch_size=64):
        outputs = []
        for start in range(0, len(texts), batch_size):
            tokens = self.tokenize(texts[start:start + batch_size])
            outputs.append(self._serve(tf.constant(tokens)).numpy())
        return np.concatenate(outputs)


def incoming_texts(rng, n):
    words = ["offre", "emploi", "contrat", "salaire", "poste", "cdi", "temps", "partiel", "mission"]
    return [" ".join(rng.choice(words, int(rng.integers(3, 400)))) for _ in range(n)]


if __name__ == "__main__":
    classifier = TextClassifier()
    rng = np.random.default_rng(0)
    for request in range(20_000):  # an API: every request has its own text lengths
        probs = classifier.predict_proba(incoming_texts(rng, int(rng.integers(1, 200))))
        if request % 500 == 0:
            print(request, probs.shape)
