"""Encoding millions of sentences keeps every batch's embeddings on the GPU until the last batch

Source: https://github.com/huggingface/sentence-transformers/issues/522
Style: plain
Kind: device memory grows without a graph: embeddings kept on the GPU over a whole encoding run
"""
import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer


class SentenceEncoder:
    def __init__(self, name="sentence-transformers/all-MiniLM-L6-v2", device=None):
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(name)
        self.model = AutoModel.from_pretrained(name).to(self.device).eval()

    def encode(self, sentences, batch_size=256, convert_to_numpy=True):
        all_embeddings = []
        order = np.argsort([-len(s) for s in sentences])
        for start in range(0, len(sentences), batch_size):
            batch = [sentences[i] for i in order[start:start + batch_size]]
            features = self.tokenizer(batch, padding=True, truncation=True, max_length=128, return_tensors="pt").to(self.device)
            with torch.no_grad():
                token_embeddings = self.model(**features).last_hidden_state
                mask = features["attention_mask"].unsqueeze(-1).float()
                embeddings = (token_embeddings * mask).sum(1) / mask.sum(1)
                embeddings = torch.nn.functional.normalize(embeddings, dim=1)
            all_embeddings.extend(embeddings)  # leak: new:device-accumulation
        all_embeddings = [all_embeddings[i] for i in np.argsort(order)]
        if convert_to_numpy:
            return np.stack([e.cpu().numpy() for e in all_embeddings])
        return torch.stack(all_embeddings)


if __name__ == "__main__":
    encoder = SentenceEncoder()
    corpus = [f"product description number {i} with some words" for i in range(4_000_000)]
    vectors = encoder.encode(corpus)
    np.save("corpus_embeddings.npy", vectors)
