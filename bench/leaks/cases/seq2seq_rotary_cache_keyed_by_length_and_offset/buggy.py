"""Encoder-decoder with rotary embeddings: the frequency cache is a dict keyed by sequence length and decoding offset

Source: https://github.com/lucidrains/rotary-embedding-torch/issues/15
Style: seq2seq
Kind: a dict on self grows with every new input: every sequence length and every decoding offset met while training and greedy-decoding variable-length batches adds its own frequency tensor to the cache, and nothing ever evicts one (the report: evaluation slows down and hangs after a few epochs; fixed by caching one table for the longest length and slicing it)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, theta=10000.0):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / theta ** (torch.arange(0, dim, 2).float() / dim), persistent=False)
        self.cache = dict()

    def freqs_for(self, seq_len, offset, device):
        key = f"freqs:{seq_len}|offset:{offset}"
        if key in self.cache:
            return self.cache[key]
        positions = torch.arange(offset, offset + seq_len, device=device, dtype=self.inv_freq.dtype)
        freqs = torch.outer(positions, self.inv_freq).repeat_interleave(2, dim=-1)
        self.cache[key] = freqs  # leak: LL306
        return freqs

    def rotate(self, t, offset=0):
        freqs = self.freqs_for(t.shape[-2], offset, t.device)
        x1, x2 = t[..., 0::2], t[..., 1::2]
        rotated = torch.stack((-x2, x1), dim=-1).flatten(-2)
        return t * freqs.cos() + rotated * freqs.sin()


class Attention(nn.Module):
    def __init__(self, dim, heads, rotary, causal):
        super().__init__()
        self.heads, self.rotary, self.causal = heads, rotary, causal
        self.to_q, self.to_kv, self.to_out = nn.Linear(dim, dim), nn.Linear(dim, 2 * dim), nn.Linear(dim, dim)

    def forward(self, x, context=None, past=None):
        b, n, d = x.shape
        context = x if context is None else context
        q = self.to_q(x).view(b, n, self.heads, -1).transpose(1, 2)
        k, v = (t.view(b, context.shape[1], self.heads, -1).transpose(1, 2) for t in self.to_kv(context).chunk(2, dim=-1))
        offset = 0 if past is None else past[0].shape[-2]
        if self.rotary is not None:
            q = self.rotary.rotate(q, offset=offset)
            k = self.rotary.rotate(k, offset=offset)
        if past is not None:
            k, v = torch.cat([past[0], k], dim=-2), torch.cat([past[1], v], dim=-2)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal and past is None)
        return self.to_out(out.transpose(1, 2).reshape(b, n, d)), (k, v)


class Seq2Seq(nn.Module):
    def __init__(self, vocab=8000, dim=256, heads=8, layers=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rotary = RotaryEmbedding(dim // heads)
        self.enc = nn.ModuleList(Attention(dim, heads, self.rotary, causal=False) for _ in range(layers))
        self.dec_self = nn.ModuleList(Attention(dim, heads, self.rotary, causal=True) for _ in range(layers))
        self.dec_cross = nn.ModuleList(Attention(dim, heads, None, causal=False) for _ in range(layers))
        self.head = nn.Linear(dim, vocab)

    def encode(self, src):
        h = self.embed(src)
        for layer in self.enc:
            h = h + layer(h)[0]
        return h

    def decode(self, tgt, memory, past=None):
        h, new_past = self.embed(tgt), []
        for i, (self_attn, cross_attn) in enumerate(zip(self.dec_self, self.dec_cross)):
            out, kv = self_attn(h, past=None if past is None else past[i])
            h = h + out
            h = h + cross_attn(h, context=memory)[0]
            new_past.append(kv)
        return self.head(h), new_past

    @torch.no_grad()
    def greedy(self, src, bos=1, eos=2, max_len=200):
        memory = self.encode(src)
        ys = torch.full((src.shape[0], 1), bos, device=src.device)
        logits, past = self.decode(ys, memory)
        for _ in range(max_len):
            next_tok = logits[:, -1].argmax(-1, keepdim=True)
            ys = torch.cat([ys, next_tok], dim=1)
            if (next_tok == eos).all():
                break
            logits, past = self.decode(next_tok, memory, past)
        return ys


def run(model, train_loader, val_loader, epochs=30, device="cuda"):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(epochs):
        model.train()
        for src, tgt in train_loader:
            src, tgt = src.to(device), tgt.to(device)
            logits, _ = model.decode(tgt[:, :-1], model.encode(src))
            loss = F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        exact = total = 0
        for src, tgt in val_loader:
            hyp = model.greedy(src.to(device), max_len=tgt.shape[1])
            n = min(hyp.shape[1], tgt.shape[1])
            exact += (hyp[:, :n].cpu() == tgt[:, :n]).all(1).sum().item()
            total += src.shape[0]
        print(f"epoch {epoch}: exact match {exact / total:.3f}, rotary cache entries {len(model.rotary.cache)}")
