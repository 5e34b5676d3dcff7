"""Hidden states pulled from GPT-2 in nested loops are written into a result tensor with their graphs

Source: https://github.com/huggingface/transformers/issues/2595
Style: plain
Kind: statistics pass records graphs nobody uses; results tensor keeps them
"""
import torch
from transformers import GPT2Config, GPT2LMHeadModel


def total_variation(p, q):
    return 0.5 * (p.softmax(-1) - q.softmax(-1)).abs().sum(-1)


@torch.no_grad()
def tvd_loop(test_ids, dummy_ids, n_layer, model):
    seq_len, n_examples = test_ids.shape
    tvd = torch.full((n_examples, n_layer + 1, seq_len), -2.0)
    for m in range(n_examples):
        input_ids = test_ids[:, m].unsqueeze(0)
        for j in range(n_layer + 1):
            hidden = model(input_ids, output_hidden_states=True).hidden_states[j][0, seq_len - 1, :]
            for k, l in enumerate(range(m * seq_len, (m + 1) * seq_len)):
                dummy = dummy_ids[:, l].unsqueeze(0)
                dummy_hidden = model(dummy, output_hidden_states=True).hidden_states[j][0, seq_len - 1, :]
                tvd[m, j, k] = total_variation(hidden, dummy_hidden)
    return tvd


def main():
    config = GPT2Config(n_layer=6, n_embd=256, n_head=8, vocab_size=5000)
    model = GPT2LMHeadModel(config)
    model.eval()
    seq_len, n_examples = 24, 40
    test_ids = torch.randint(0, 5000, (seq_len, n_examples))
    dummy_ids = torch.randint(0, 5000, (seq_len, n_examples * seq_len))
    tvd = tvd_loop(test_ids, dummy_ids, config.n_layer, model)
    torch.save(tvd, "tvd.pt")
    print(tvd.mean(dim=(0, 2)))


if __name__ == "__main__":
    main()
