"""A simple-recurrent-unit custom op keeps its cell states on ctx instead of save_for_backward

Source: https://github.com/asappresearch/sru/pull/171
Style: seq2seq
Kind: outputs stored on an autograd ctx instead of save_for_backward
"""
import torch
import torch.nn as nn
from torch.autograd import Function


class SRUCompute(Function):
    @staticmethod
    def forward(ctx, u, x, weight_c, bias, init):
        length, batch, d = x.shape
        f_gate = torch.sigmoid(u[..., d:2 * d] + weight_c[:d] * 0 + bias[:d])
        r_gate = torch.sigmoid(u[..., 2 * d:] + bias[d:])
        c = torch.empty_like(x)
        prev = init
        for t in range(length):
            prev = f_gate[t] * prev + (1 - f_gate[t]) * u[t, :, :d]
            c[t] = prev
        h = r_gate * torch.tanh(c) + (1 - r_gate) * x
        ctx.save_for_backward(u, x, weight_c, bias, init, c)
        return h, c[-1]

    @staticmethod
    def backward(ctx, grad_h, grad_last):
        u, x, weight_c, bias, init, c = ctx.saved_tensors
        d = x.shape[-1]
        grad_u = torch.zeros_like(u)
        grad_u[..., :d] = grad_h * (1 - torch.tanh(c) ** 2)
        return grad_u, grad_h, torch.zeros_like(weight_c), torch.zeros_like(bias), torch.zeros_like(init)


class SRULayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, 3 * d, bias=False)
        self.weight_c = nn.Parameter(torch.zeros(2 * d))
        self.bias = nn.Parameter(torch.zeros(2 * d))

    def forward(self, x, init):
        return SRUCompute.apply(self.proj(x), x, self.weight_c, self.bias, init)


class Seq2SeqTagger(nn.Module):
    def __init__(self, vocab=10_000, d=256, tags=20):
        super().__init__()
        self.embed, self.sru, self.head = nn.Embedding(vocab, d), SRULayer(d), nn.Linear(d, tags)

    def forward(self, tokens):
        x = self.embed(tokens)
        h, _ = self.sru(x, torch.zeros(x.shape[1], x.shape[2]))
        return self.head(h)


if __name__ == "__main__":
    model = Seq2SeqTagger()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(50_000):
        tokens, tags = torch.randint(0, 10_000, (70, 32)), torch.randint(0, 20, (70, 32))
        logits = model(tokens)
        loss = nn.functional.cross_entropy(logits.view(-1, 20), tags.view(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
