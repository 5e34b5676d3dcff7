"""A remote-inference session remembers every step's hidden-state inputs so it can replay them

Source: https://github.com/bigscience-workshop/petals/pull/177
Style: seq2seq
Kind: a list on self grows with every generated token (hidden states kept after their outputs arrive)
Runnable from: bench/leaks/cases/seq2seq_inference_session_keeps_step_inputs
Run: --step __main__:InferenceSession.step
"""
import torch
import torch.nn as nn


class RemoteBlocks(nn.Module):
    """Stands in for transformer blocks served by other machines."""

    def __init__(self, dim=256, n_blocks=2):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n_blocks)])

    def forward(self, hidden):
        for block in self.blocks:
            hidden = hidden + torch.tanh(block(hidden))
        return hidden


class InferenceSession:
    def __init__(self, remote, max_length):
        self.remote, self.max_length = remote, max_length
        self._position = 0

    def step(self, inputs):
        outputs = self.remote(inputs)
        self._position += inputs.shape[1]
        return outputs


class DistributedLM(nn.Module):
    def __init__(self, vocab=2000, dim=256):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.remote = RemoteBlocks(dim)

    @torch.inference_mode()
    def generate(self, input_ids, max_new_tokens=200):
        session = InferenceSession(self.remote, input_ids.shape[1] + max_new_tokens)
        hidden = self.word_embeddings(input_ids)
        for _ in range(max_new_tokens):
            out = session.step(hidden)
            next_token = self.lm_head(out[:, -1]).argmax(-1, keepdim=True)
            input_ids = torch.cat([input_ids, next_token], dim=1)
            hidden = self.word_embeddings(next_token)
        return input_ids


if __name__ == "__main__":
    torch.manual_seed(0)
    model = DistributedLM()
    print(model.generate(torch.randint(0, 2000, (8, 16))).shape)
