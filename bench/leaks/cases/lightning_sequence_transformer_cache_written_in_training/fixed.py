"""A reference-style transformer with a rolling KV cache is trained on tabular sequences; every forward writes the cache

Source: https://github.com/mistralai/mistral-inference/issues/20
Style: lightning
Kind: state fed into the next step: each training forward scatters graph-attached keys/values into the module's rolling cache buffers, so the buffers chain every step's graph (about 30 MB per step in the report) though training never reads them; the report's own training loop is not shown, it is rebuilt here as a LightningModule
"""
import math

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F


class CachedSelfAttention(nn.Module):
    def __init__(self, dim, n_heads, window, max_batch_size):
        super().__init__()
        self.n_heads, self.head_dim, self.window = n_heads, dim // n_heads, window
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        shape = (max_batch_size, window, n_heads, self.head_dim)
        self.register_buffer("cache_k", torch.zeros(shape), persistent=False)
        self.register_buffer("cache_v", torch.zeros(shape), persistent=False)

    def forward(self, x, positions, mask):
        bsz, seqlen, _ = x.shape
        q = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        k = self.wk(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        v = self.wv(x).view(bsz, seqlen, self.n_heads, self.head_dim)

        # the cache is a rolling buffer indexed by position modulo the window
        slot = (positions[-self.window:] % self.window)[None, :, None, None].expand(bsz, -1, self.n_heads, self.head_dim)
        if not self.training:  # the cache only serves incremental decoding; training never reads it
            self.cache_k[:bsz].scatter_(1, slot, k[:, -self.window:])
            self.cache_v[:bsz].scatter_(1, slot, v[:, -self.window:])

        if seqlen > 1:  # whole sequence at once (training, prefill)
            keys, values = k, v
        else:  # one new position: attend over the cache
            last = int(positions[-1]) + 1
            keys, values = self.cache_k[:bsz, :last], self.cache_v[:bsz, :last]
        scores = torch.einsum("bqhd,bkhd->bhqk", q, keys) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask
        out = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), values)
        return self.wo(out.reshape(bsz, seqlen, -1))


class Block(nn.Module):
    def __init__(self, dim, n_heads, window, max_batch_size):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = CachedSelfAttention(dim, n_heads, window, max_batch_size)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, positions, mask):
        x = x + self.attn(self.norm1(x), positions, mask)
        return x + self.mlp(self.norm2(x))


class TabularSequenceModel(pl.LightningModule):
    """Predicts the next row of a multivariate series from the previous rows."""

    def __init__(self, n_features=24, dim=256, n_layers=6, n_heads=8, window=512, max_batch_size=64, lr=3e-4):
        super().__init__()
        self.save_hyperparameters()
        self.inp = nn.Linear(n_features, dim)
        self.blocks = nn.ModuleList(Block(dim, n_heads, window, max_batch_size) for _ in range(n_layers))
        self.out = nn.Linear(dim, n_features)

    def forward(self, rows):
        seqlen = rows.shape[1]
        positions = torch.arange(seqlen, device=rows.device)
        mask = torch.full((seqlen, seqlen), float("-inf"), device=rows.device).triu(1) if seqlen > 1 else None
        h = self.inp(rows)
        for block in self.blocks:
            h = block(h, positions, mask)
        return self.out(h)

    def training_step(self, batch, batch_idx):
        rows = batch
        pred = self(rows[:, :-1])
        loss = F.mse_loss(pred, rows[:, 1:])
        self.log("train_mse", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        rows = batch
        self.log("val_mse", F.mse_loss(self(rows[:, :-1]), rows[:, 1:]))

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)


def main(train_loader, val_loader):
    trainer = pl.Trainer(max_epochs=50, accelerator="auto", gradient_clip_val=1.0)
    trainer.fit(TabularSequenceModel(), train_loader, val_loader)
