"""An embedding API builds a word-embedding module per request; a functools.lru_cache on its lookup method keeps every one alive

Source: https://github.com/flairNLP/flair/issues/2013
Source: https://github.com/flairNLP/flair/pull/2018
Style: plain
Kind: cache on a method keeps instances alive: lru_cache's key includes self, so every request's embedding table (hundreds of MB) stays referenced by the class-level cache; host memory grows request after request
"""
from functools import lru_cache

import numpy as np
import torch
import torch.nn as nn
from flask import Flask, jsonify, request

EMBEDDING_FILES = {"en-glove": "embeddings/glove.840B.300d.npz", "de-fasttext": "embeddings/cc.de.300.npz"}


class StaticWordEmbeddings(nn.Module):
    """Classic word vectors, looked up per token and cached as tensors."""

    def __init__(self, key, device="cpu"):
        super().__init__()
        archive = np.load(EMBEDDING_FILES[key], allow_pickle=True)
        self.vocab = {w: i for i, w in enumerate(archive["words"].tolist())}
        self.vectors = archive["vectors"]  # [vocab, 300] float32
        self.dim = self.vectors.shape[1]
        self.device = device
        # one cache per instance: it goes away with the module instead of pinning it
        self.get_cached_vec = lru_cache(maxsize=10000)(self._lookup)

    def _lookup(self, word):
        index = self.vocab.get(word, self.vocab.get(word.lower()))
        if index is None:
            return torch.zeros(self.dim, device=self.device)
        return torch.tensor(self.vectors[index], dtype=torch.float32, device=self.device)

    def forward(self, tokens):
        return torch.stack([self.get_cached_vec(t) for t in tokens])


def embed_sentences(embeddings, sentences):
    with torch.no_grad():
        return [embeddings(s.split()).mean(0).tolist() for s in sentences]


app = Flask(__name__)


@app.route("/embed", methods=["POST"])
def embed():
    payload = request.get_json()
    key = payload.get("model", "en-glove")
    if key not in EMBEDDING_FILES:
        return jsonify({"error": f"unknown model {key}"}), 400
    embeddings = StaticWordEmbeddings(key)
    vectors = embed_sentences(embeddings, payload["sentences"])
    return jsonify({"model": key, "vectors": vectors})


@app.route("/similarity", methods=["POST"])
def similarity():
    payload = request.get_json()
    embeddings = StaticWordEmbeddings(payload.get("model", "en-glove"))
    a, b = (torch.tensor(v) for v in embed_sentences(embeddings, [payload["a"], payload["b"]]))
    return jsonify({"cosine": torch.nn.functional.cosine_similarity(a, b, dim=0).item()})


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=8080)
