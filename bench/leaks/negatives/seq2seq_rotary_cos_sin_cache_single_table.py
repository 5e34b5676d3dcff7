"""Translation decoder with rotary embeddings whose cos/sin cache on self is one table, rebuilt only for a longer sequence

Source: https://github.com/facebookresearch/xformers/issues/728
Style: seq2seq
Kind: negative: a cache kept on the module and refreshed while decoding (a single cos/sin table replaced when a longer sequence arrives and sliced otherwise; no per-length entries pile up, and it is built from positions, without a graph)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RotaryEmbedding(nn.Module):
    def __init__(self, dim_model, base=10000.0):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / base ** (torch.arange(0, dim_model, 2).float() / dim_model), persistent=False)
        self._seq_len_cached = 0
        self._cos_cached = None
        self._sin_cached = None

    def _update_cos_sin_tables(self, x, seq_len):
        if seq_len > self._seq_len_cached or self._cos_cached.device != x.device or self._cos_cached.dtype != x.dtype:
            self._seq_len_cached = seq_len
            t = torch.arange(seq_len, device=x.device, dtype=torch.float32)
            emb = torch.outer(t, self.inv_freq.to(x.device)).repeat_interleave(2, dim=-1)
            self._cos_cached = emb.cos().to(x.dtype)
            self._sin_cached = emb.sin().to(x.dtype)
        return self._cos_cached, self._sin_cached

    def forward(self, q, k, offset=0):
        cos, sin = self._update_cos_sin_tables(k, offset + k.shape[-2])
        cos, sin = cos[offset:offset + k.shape[-2]], sin[offset:offset + k.shape[-2]]

        def rotate(t):
            x1, x2 = t[..., 0::2], t[..., 1::2]
            return t * cos + torch.stack((-x2, x1), dim=-1).flatten(-2) * sin

        return rotate(q), rotate(k)


class DecoderLayer(nn.Module):
    def __init__(self, dim=512, heads=8):
        super().__init__()
        self.heads = heads
        self.qkv, self.out = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.cross = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(3))
        self.rotary = RotaryEmbedding(dim // heads)

    def forward(self, x, memory, past=None):
        b, n, d = x.shape
        q, k, v = (t.view(b, n, self.heads, -1).transpose(1, 2) for t in self.qkv(self.norms[0](x)).chunk(3, dim=-1))
        offset = 0 if past is None else past[0].shape[-2]
        q, k = self.rotary(q, k, offset=offset)
        if past is not None:
            k, v = torch.cat([past[0], k], dim=-2), torch.cat([past[1], v], dim=-2)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=past is None)
        x = x + self.out(attn.transpose(1, 2).reshape(b, n, d))
        x = x + self.cross(self.norms[1](x), memory, memory, need_weights=False)[0]
        return x + self.ff(self.norms[2](x)), (k, v)


@torch.no_grad()
def translate(embed, layers, head, memory, bos=0, eos=2, max_len=256):
    ys = torch.full((memory.shape[0], 1), bos, device=memory.device)
    h, pasts = embed(ys), [None] * len(layers)
    for _ in range(max_len):
        for i, layer in enumerate(layers):
            h, pasts[i] = layer(h, memory, pasts[i])
        next_tok = head(h[:, -1]).argmax(-1, keepdim=True)
        ys = torch.cat([ys, next_tok], dim=1)
        if (next_tok == eos).all():
            break
        h = embed(next_tok)
    return ys
