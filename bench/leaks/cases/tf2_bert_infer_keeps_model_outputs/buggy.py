"""Active-learning text classifier (TF2 BERT): inference over the unlabeled pool keeps every batch's full model output

Source: https://github.com/IBM/low-resource-text-classification-framework/pull/1
Style: tf2-loop
Kind: device memory grows without a graph: `infer()` appends each batch's whole model output (logits plus all hidden states, GPU tensors) to a list and converts only at the end, so scoring a large pool keeps every batch's activations on the GPU until ResourceExhaustedError
"""
import numpy as np
import tensorflow as tf
from transformers import AutoTokenizer, TFAutoModelForSequenceClassification


class BertClassifier:
    def __init__(self, model_name="bert-base-uncased", n_labels=2, max_len=100, batch_size=10):
        self.tokenizer = AutoTokenizer.from_pretrained(model_name)
        self.model = TFAutoModelForSequenceClassification.from_pretrained(
            model_name, num_labels=n_labels, output_hidden_states=True)
        self.max_len, self.batch_size = max_len, batch_size
        self.model.compile(optimizer=tf.keras.optimizers.Adam(5e-5),
                           loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))

    def encode(self, texts):
        enc = self.tokenizer(texts, max_length=self.max_len, truncation=True, padding="max_length", return_tensors="tf")
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}

    def train(self, texts, labels, epochs=5):
        ds = tf.data.Dataset.from_tensor_slices((self.encode(texts), np.asarray(labels)))
        self.model.fit(ds.shuffle(len(texts)).batch(self.batch_size), epochs=epochs, verbose=2)

    def infer(self, texts):
        ds = tf.data.Dataset.from_tensor_slices(self.encode(texts)).batch(self.batch_size)
        outputs = []
        for batch in ds:
            outputs.append(self.model(batch, training=False))  # leak: new:device-accumulation
        logits = tf.concat([o.logits for o in outputs], axis=0)
        probs = tf.nn.softmax(logits, axis=-1).numpy()
        return probs.argmax(-1), probs[:, 1]


def least_confidence(scores, k):
    return np.argsort(np.abs(scores - 0.5))[:k]


def active_learning_loop(labeled, pool, oracle, rounds=10, per_round=50):
    texts, labels = list(labeled["text"]), list(labeled["label"])
    pool = list(pool)
    for r in range(rounds):
        clf = BertClassifier()
        clf.train(texts, labels)
        _, scores = clf.infer(pool)
        picked = sorted(least_confidence(scores, per_round), reverse=True)
        for i in picked:
            texts.append(pool[i])
            labels.append(oracle(pool[i]))
            del pool[i]
        print(f"round {r}: {len(texts)} labeled, {len(pool)} left in pool")
        tf.keras.backend.clear_session()
    return texts, labels


if __name__ == "__main__":
    import pandas as pd

    df = pd.read_csv("wiki_attack_train.csv")
    seed = df.sample(100, random_state=0)
    rest = df.drop(seed.index)
    gold = dict(zip(rest["text"], rest["label"]))
    active_learning_loop(seed, rest["text"], gold.__getitem__)
