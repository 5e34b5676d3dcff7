"""Seq2seq chatbot evaluation: loss and beam search run inside torch.no_grad(), hypotheses kept as token lists

Source: https://github.com/facebookresearch/ParlAI/pull/1466
Style: seq2seq
Kind: negative: resembles an evaluation forward without no_grad (LL201) and decoder states carried from step to step with their graph (hidden-state carry) plus outputs collected over a whole evaluation; the evaluation step is wrapped in torch.no_grad() as the PR does, the beam's hidden state is re-indexed without autograd, and only Python lists of token ids and float losses are kept
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GRUSeq2Seq(nn.Module):
    def __init__(self, vocab, dim=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.enc = nn.GRU(dim, dim, batch_first=True)
        self.dec = nn.GRU(dim, dim, batch_first=True)
        self.proj = nn.Linear(dim, vocab)

    def encode(self, src):
        return self.enc(self.emb(src))[1]

    def step(self, tok, h):
        o, h = self.dec(self.emb(tok), h)
        return F.log_softmax(self.proj(o[:, -1]), -1), h

    def forward(self, src, tgt_in):
        return self.proj(self.dec(self.emb(tgt_in), self.encode(src))[0])


def beam_decode(model, src, beam=4, max_len=32, bos=1, eos=2):
    h = model.encode(src).repeat(1, beam, 1)
    seqs = torch.full((beam, 1), bos, dtype=torch.long, device=src.device)
    score = torch.full((beam,), -1e9, device=src.device)
    score[0] = 0.0
    for _ in range(max_len):
        logp, h = model.step(seqs[:, -1:], h)
        flat = (score[:, None] + logp).view(-1)
        score, idx = flat.topk(beam)
        origin = idx // logp.shape[-1]
        seqs = torch.cat([seqs[origin], (idx % logp.shape[-1])[:, None]], 1)
        h = h[:, origin]
        if (seqs[:, -1] == eos).all():
            break
    return seqs[0].tolist()


@torch.no_grad()
def evaluate(model, batches, pad=0):
    model.eval()
    losses, hyps = [], []
    for src, tgt in batches:
        src, tgt = src.cuda(), tgt.cuda()
        logits = model(src, tgt[:, :-1])
        losses.append(F.cross_entropy(logits.transpose(1, 2), tgt[:, 1:], ignore_index=pad).item())
        hyps.extend(beam_decode(model, src[i:i + 1]) for i in range(src.shape[0]))
    model.train()
    return sum(losses) / max(len(losses), 1), hyps
