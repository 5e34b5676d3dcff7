"""Hidden states pulled from GPT-2 in nested loops are written into a result tensor with their graphs

Source: https://github.com/huggingface/transformers/issues/2595
Style: plain
Kind: statistics pass records graphs nobody uses; results tensor keeps them
Runnable from: bench/leaks/cases/plain_gpt2_hidden_states_tvd_loop
Run: --step __main__:TinyGPT.forward
"""
import os
import tempfile

import torch
import torch.nn as nn


class TinyGPT(nn.Module):
    """Stands in for GPT2LMHeadModel: returns every layer's hidden states when asked."""

    def __init__(self, n_layer=2, n_embd=32, vocab_size=500):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))
                                     for _ in range(n_layer)])
        self.lm_head = nn.Linear(n_embd, vocab_size)

    def forward(self, input_ids, output_hidden_states=False):
        h = self.wte(input_ids)
        hidden_states = [h]
        for block in self.blocks:
            h = h + block(h)
            hidden_states.append(h)
        return {"logits": self.lm_head(h), "hidden_states": hidden_states if output_hidden_states else None}


def total_variation(p, q):
    return 0.5 * (p.softmax(-1) - q.softmax(-1)).abs().sum(-1)


@torch.no_grad()
def tvd_loop(test_ids, dummy_ids, n_layer, model):
    seq_len, n_examples = test_ids.shape
    tvd = torch.full((n_examples, n_layer + 1, seq_len), -2.0)
    for m in range(n_examples):
        input_ids = test_ids[:, m].unsqueeze(0)
        for j in range(n_layer + 1):
            hidden = model(input_ids, output_hidden_states=True)["hidden_states"][j][0, seq_len - 1, :]
            for k, l in enumerate(range(m * seq_len, (m + 1) * seq_len)):
                dummy = dummy_ids[:, l].unsqueeze(0)
                dummy_hidden = model(dummy, output_hidden_states=True)["hidden_states"][j][0, seq_len - 1, :]
                tvd[m, j, k] = total_variation(hidden, dummy_hidden)
    return tvd


def main():
    torch.manual_seed(0)
    n_layer = 2
    model = TinyGPT(n_layer=n_layer)
    model.eval()
    seq_len, n_examples = 8, 4
    test_ids = torch.randint(0, 500, (seq_len, n_examples))
    dummy_ids = torch.randint(0, 500, (seq_len, n_examples * seq_len))
    tvd = tvd_loop(test_ids, dummy_ids, n_layer, model)
    torch.save(tvd, os.path.join(tempfile.mkdtemp(), "tvd.pt"))
    print(tvd.mean(dim=(0, 2)))


if __name__ == "__main__":
    main()
