"""A generation backend keeps every call's KV cache and output tensors in a dict it never trims

Source: https://github.com/generative-computing/mellea/pull/544
Style: plain
Kind: a dict on self grows with every new input (KV caches and outputs on the GPU)
"""
import hashlib

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


class LocalBackend:
    def __init__(self, model_id="gpt2", device=None):
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(model_id)
        self.model = AutoModelForCausalLM.from_pretrained(model_id).to(self.device).eval()
        self._outputs = {}

    def _key(self, prompt, **kwargs):
        return hashlib.sha1((prompt + repr(sorted(kwargs.items()))).encode()).hexdigest()

    @torch.no_grad()
    def generate(self, prompt, max_new_tokens=64):
        key = self._key(prompt, max_new_tokens=max_new_tokens)
        inputs = self.tokenizer(prompt, return_tensors="pt").to(self.device)
        out = self.model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=True,
                                  return_dict_in_generate=True, output_scores=True, use_cache=True)
        self._outputs[key] = out  # leak: new:cache-growth
        return self.tokenizer.decode(out.sequences[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)


def instruct(backend, task, retries=3):
    answer = backend.generate(f"Task: {task}\nAnswer:")
    for _ in range(retries):
        verdict = backend.generate(f"Is this a good answer to '{task}'? {answer}\nYes or no:", max_new_tokens=2)
        if "yes" in verdict.lower():
            break
        answer = backend.generate(f"Task: {task}\nBetter answer:")
    return answer


if __name__ == "__main__":
    backend = LocalBackend()
    for i in range(10_000):
        print(instruct(backend, f"summarise ticket #{i}"))
