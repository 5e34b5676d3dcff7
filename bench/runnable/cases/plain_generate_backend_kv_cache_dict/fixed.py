"""A generation backend keeps every call's KV cache and output tensors in a dict it never trims

Source: https://github.com/generative-computing/mellea/pull/544
Style: plain
Kind: a dict on self grows with every new input (KV caches and outputs on the GPU)
Runnable from: bench/leaks/cases/plain_generate_backend_kv_cache_dict
Run: --step __main__:LocalBackend.generate
"""
import hashlib

import torch
import torch.nn as nn


class TinyCausalLM(nn.Module):
    """Stands in for the pretrained model: greedy/sampled generation returning sequences and scores."""

    def __init__(self, vocab=1000, dim=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def generate(self, input_ids, max_new_tokens):
        out, h = self.rnn(self.embed(input_ids))
        scores, tokens = [], [input_ids]
        for _ in range(max_new_tokens):
            logits = self.head(out[:, -1])
            scores.append(logits)
            token = torch.multinomial(logits.softmax(-1), 1)
            tokens.append(token)
            out, h = self.rnn(self.embed(token), h)
        return {"sequences": torch.cat(tokens, 1), "scores": scores, "past_key_values": h}


class LocalBackend:
    def __init__(self):
        self.model = TinyCausalLM().eval()

    def _key(self, prompt, **kwargs):
        return hashlib.sha1((prompt + repr(sorted(kwargs.items()))).encode()).hexdigest()

    def encode(self, prompt):
        return torch.tensor([[ord(c) % 1000 for c in prompt]])

    @torch.no_grad()
    def generate(self, prompt, max_new_tokens=16):
        key = self._key(prompt, max_new_tokens=max_new_tokens)
        input_ids = self.encode(prompt)
        out = self.model.generate(input_ids, max_new_tokens=max_new_tokens)
        return " ".join(str(int(t)) for t in out["sequences"][0, input_ids.shape[1]:])


def instruct(backend, task, retries=3):
    answer = backend.generate(f"Task: {task}\nAnswer:")
    for _ in range(retries):
        verdict = backend.generate(f"Is this a good answer to '{task}'? {answer}\nYes or no:", max_new_tokens=2)
        if "yes" in verdict.lower():
            break
        answer = backend.generate(f"Task: {task}\nBetter answer:")
    return answer


if __name__ == "__main__":
    torch.manual_seed(0)
    backend = LocalBackend()
    for i in range(100):
        instruct(backend, f"summarise ticket #{i}")
