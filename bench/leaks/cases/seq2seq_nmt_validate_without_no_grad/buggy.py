"""An NMT trainer's validate() runs the encoder-decoder over the validation set with autograd on

Source: https://github.com/OpenNMT/OpenNMT-py/issues/1141
Style: seq2seq
Kind: evaluation forward records a graph nobody uses (lost in the 0.4 -> 1.0 migration from volatile Variables)
"""
import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Statistics:
    def __init__(self, loss=0.0, n_words=0, n_correct=0):
        self.loss, self.n_words, self.n_correct = loss, n_words, n_correct

    def update(self, other):
        self.loss += other.loss
        self.n_words += other.n_words
        self.n_correct += other.n_correct

    def ppl(self):
        return math.exp(min(self.loss / max(self.n_words, 1), 100))


class NMTModel(nn.Module):
    def __init__(self, vocab=32000, dim=512):
        super().__init__()
        self.src_emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.tgt_emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.encoder = nn.LSTM(dim, dim, num_layers=2, batch_first=True)
        self.decoder = nn.LSTM(dim, dim, num_layers=2, batch_first=True)
        self.attn = nn.MultiheadAttention(dim, 8, batch_first=True)
        self.generator = nn.Linear(2 * dim, vocab)

    def forward(self, src, tgt):
        memory, state = self.encoder(self.src_emb(src))
        dec_out, _ = self.decoder(self.tgt_emb(tgt), state)
        context, attns = self.attn(dec_out, memory, memory)
        return self.generator(torch.cat([dec_out, context], -1)), attns


class Trainer:
    def __init__(self, model, optimizer, pad=0):
        self.model, self.optimizer, self.pad = model, optimizer, pad
        self.criterion = nn.CrossEntropyLoss(ignore_index=pad, reduction="sum")

    def _stats(self, logits, gold):
        loss = self.criterion(logits.flatten(0, 1), gold.flatten())
        mask = gold.ne(self.pad)
        correct = logits.argmax(-1).eq(gold).masked_select(mask).sum().item()
        return loss, Statistics(loss.item(), mask.sum().item(), correct)

    def train_epoch(self, loader):
        self.model.train()
        for src, tgt in loader:
            logits, _ = self.model(src, tgt[:, :-1])
            loss, _ = self._stats(logits, tgt[:, 1:])
            self.optimizer.zero_grad()
            (loss / tgt[:, 1:].ne(self.pad).sum()).backward()
            self.optimizer.step()

    def validate(self, valid_iter):
        self.model.eval()
        stats = Statistics()
        for src, tgt in valid_iter:
            outputs, attns = self.model(src, tgt[:, :-1])  # leak: LL201
            _, batch_stats = self._stats(outputs, tgt[:, 1:])
            stats.update(batch_stats)
        self.model.train()
        return stats


if __name__ == "__main__":
    def corpus(n):
        return TensorDataset(torch.randint(1, 32000, (n, 60)), torch.randint(1, 32000, (n, 62)))

    model = NMTModel()
    trainer = Trainer(model, torch.optim.Adam(model.parameters(), lr=2e-4))
    train_loader = DataLoader(corpus(100_000), batch_size=64, shuffle=True)
    valid_loader = DataLoader(corpus(5_000), batch_size=256)
    for epoch in range(13):
        trainer.train_epoch(train_loader)
        stats = trainer.validate(valid_loader)
        print(f"epoch {epoch}: valid ppl {stats.ppl():.2f} acc {100 * stats.n_correct / stats.n_words:.2f}")
