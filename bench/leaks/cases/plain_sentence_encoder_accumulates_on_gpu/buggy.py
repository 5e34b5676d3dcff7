"""Contrastive sentence encoder: embedding a large corpus collects every batch's embeddings on the GPU

Source: https://github.com/JohnGiorgi/DeCLUTR/pull/151
Style: plain
Kind: device memory grows without a graph: the Encoder's `__call__` runs under no_grad but appends each batch's mean-pooled embeddings to a list while they are still on the CUDA device and concatenates them at the end; embedding a large corpus fills the GPU with every embedding until CUDA OOM
"""
import argparse
import json

import numpy as np
import torch
import torch.nn.functional as F
from transformers import AutoModel, AutoTokenizer


class Encoder:
    def __init__(self, model_name_or_path, cuda_device=-1, batch_size=64, max_length=512):
        self.device = torch.device(f"cuda:{cuda_device}" if cuda_device >= 0 else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(model_name_or_path)
        self.model = AutoModel.from_pretrained(model_name_or_path).to(self.device).eval()
        self.batch_size, self.max_length = batch_size, max_length

    def _mean_pool(self, hidden, mask):
        mask = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    @torch.no_grad()
    def __call__(self, texts, normalize=True):
        if isinstance(texts, str):
            texts = [texts]
        embeddings = []
        for start in range(0, len(texts), self.batch_size):
            chunk = texts[start:start + self.batch_size]
            enc = self.tokenizer(chunk, padding=True, truncation=True, max_length=self.max_length,
                                 return_tensors="pt").to(self.device)
            hidden = self.model(**enc).last_hidden_state
            emb = self._mean_pool(hidden, enc["attention_mask"])
            if normalize:
                emb = F.normalize(emb, dim=-1)
            embeddings.append(emb)  # leak: LL202
        return torch.cat(embeddings, dim=0)


def nearest_neighbours(queries, corpus, k=5):
    scores = queries @ corpus.T
    top = scores.topk(k, dim=-1)
    return top.indices.tolist(), top.values.tolist()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="johngiorgi/declutr-small")
    parser.add_argument("--corpus", default="openwebtext_sentences.jsonl")
    parser.add_argument("--queries", default="queries.txt")
    parser.add_argument("--cuda_device", type=int, default=0)
    args = parser.parse_args()

    with open(args.corpus) as f:
        corpus = [json.loads(line)["text"] for line in f]
    with open(args.queries) as f:
        queries = [line.strip() for line in f if line.strip()]

    encoder = Encoder(args.model, cuda_device=args.cuda_device)
    corpus_emb = encoder(corpus)
    query_emb = encoder(queries)
    idx, sims = nearest_neighbours(query_emb.cpu(), corpus_emb.cpu())
    np.save("corpus_embeddings.npy", corpus_emb.cpu().numpy())
    for q, ids, ss in zip(queries, idx, sims):
        print(q)
        for i, s in zip(ids, ss):
            print(f"  {s:.3f}  {corpus[i][:100]}")


if __name__ == "__main__":
    main()
