"""Transformer speech recognizer: the per-epoch validation pass runs the encoder-decoder with autograd on

Source: https://github.com/gentaiscool/end2end-asr-pytorch/issues/29
Source: https://github.com/gentaiscool/end2end-asr-pytorch/pull/41
Style: seq2seq
Kind: evaluation forward records a graph nobody uses: the validation loop calls the teacher-forced encoder-decoder under model.eval() but without torch.no_grad(), so each validation batch (unpruned, longer utterances than training) builds a training-size graph; training fits, validation after the first epoch runs out of CUDA memory
"""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, SOS, EOS = 0, 1, 2


class SpeechTransformer(nn.Module):
    def __init__(self, n_mels=80, vocab=4000, d_model=512, heads=8, enc_layers=12, dec_layers=6):
        super().__init__()
        self.subsample = nn.Sequential(
            nn.Conv2d(1, 64, 3, stride=2), nn.ReLU(), nn.Conv2d(64, 64, 3, stride=2), nn.ReLU())
        self.proj = nn.Linear(64 * (((n_mels - 1) // 2 - 1) // 2), d_model)
        self.embed = nn.Embedding(vocab, d_model, padding_idx=PAD)
        self.core = nn.Transformer(d_model, heads, enc_layers, dec_layers, dim_feedforward=2048, batch_first=True)
        self.out = nn.Linear(d_model, vocab)

    def forward(self, feats, tgt_in):
        x = self.subsample(feats.unsqueeze(1))
        b, c, t, f = x.shape
        src = self.proj(x.permute(0, 2, 1, 3).reshape(b, t, c * f))
        tgt = self.embed(tgt_in)
        causal = self.core.generate_square_subsequent_mask(tgt_in.size(1)).to(feats.device)
        h = self.core(src, tgt, tgt_mask=causal, tgt_key_padding_mask=tgt_in.eq(PAD))
        return self.out(h)


def char_error_rate(hyp_ids, ref_ids):
    errors, total = 0, 0
    for hyp, ref in zip(hyp_ids, ref_ids):
        ref = [t for t in ref if t not in (PAD, EOS)]
        hyp = [t for t in hyp if t not in (PAD, EOS)]
        dist = list(range(len(hyp) + 1))
        for i, r in enumerate(ref, 1):
            prev, dist[0] = dist[0], i
            for j, h in enumerate(hyp, 1):
                prev, dist[j] = dist[j], min(dist[j] + 1, dist[j - 1] + 1, prev + (r != h))
        errors += dist[-1]
        total += max(len(ref), 1)
    return errors / max(total, 1)


class Trainer:
    def __init__(self, model, optimizer, device="cuda"):
        self.model, self.optimizer, self.device = model.to(device), optimizer, device

    def _step(self, feats, tokens):
        tgt_in, tgt_out = tokens[:, :-1], tokens[:, 1:]
        logits = self.model(feats, tgt_in)
        loss = F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD, label_smoothing=0.1)
        return loss, logits

    def train(self, train_loader, valid_loader, epochs=100):
        for epoch in range(epochs):
            self.model.train()
            start, total = time.time(), 0.0
            for feats, tokens in train_loader:
                feats, tokens = feats.to(self.device), tokens.to(self.device)
                loss, _ = self._step(feats, tokens)
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), 5.0)
                self.optimizer.step()
                total += loss.item()
            print(f"epoch {epoch} train loss {total / len(train_loader):.3f} ({time.time() - start:.0f}s)")

            self.model.eval()
            valid_loss, hyps, refs = 0.0, [], []
            with torch.no_grad():
                for feats, tokens in valid_loader:
                    feats, tokens = feats.to(self.device), tokens.to(self.device)
                    loss, logits = self._step(feats, tokens)
                    valid_loss += loss.item()
                    hyps += logits.argmax(-1).tolist()
                    refs += tokens[:, 1:].tolist()
            print(f"epoch {epoch} valid loss {valid_loss / len(valid_loader):.3f} CER {char_error_rate(hyps, refs):.3%}")
            torch.save(self.model.state_dict(), f"asr_epoch{epoch}.pt")
