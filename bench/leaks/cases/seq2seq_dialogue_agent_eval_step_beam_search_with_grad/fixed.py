"""Dialogue seq2seq agent: eval_step switches the model to eval mode but runs loss and beam search with autograd on

Source: https://github.com/facebookresearch/ParlAI/pull/1466
Style: seq2seq
Kind: evaluation forward records a graph nobody uses: the agent's evaluation step (teacher-forced loss plus beam search) runs without torch.no_grad(), so every decoding step keeps activations for a backward pass that never comes; memory during validation and beam search is far above what inference needs
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Seq2Seq(nn.Module):
    def __init__(self, vocab, dim=512):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.decoder = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def encode(self, src):
        _, h = self.encoder(self.emb(src))
        return h

    def decode_step(self, tokens, h):
        o, h = self.decoder(self.emb(tokens), h)
        return F.log_softmax(self.out(o[:, -1]), -1), h

    def forward(self, src, tgt_in):
        o, _ = self.decoder(self.emb(tgt_in), self.encode(src))
        return self.out(o)


def beam_search(model, src, beam=5, max_len=40, bos=1, eos=2):
    h = model.encode(src).repeat(1, beam, 1)
    tokens = torch.full((beam, 1), bos, dtype=torch.long, device=src.device)
    scores = torch.zeros(beam, device=src.device)
    scores[1:] = -1e9
    for _ in range(max_len):
        logp, h = model.decode_step(tokens[:, -1:], h)
        cand = (scores[:, None] + logp).view(-1)
        scores, idx = cand.topk(beam)
        prev, nxt = idx // logp.shape[-1], idx % logp.shape[-1]
        tokens = torch.cat([tokens[prev], nxt[:, None]], 1)
        h = h[:, prev]
        if (nxt == eos).all():
            break
    return tokens[0]


class DialogueAgent:
    def __init__(self, model, pad=0):
        self.model, self.pad = model, pad

    def train_step(self, src, tgt, optimizer):
        self.model.train()
        logits = self.model(src, tgt[:, :-1])
        loss = F.cross_entropy(logits.transpose(1, 2), tgt[:, 1:], ignore_index=self.pad)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()

    @torch.no_grad()
    def eval_step(self, src, tgt):
        self.model.eval()
        logits = self.model(src, tgt[:, :-1])
        loss = F.cross_entropy(logits.transpose(1, 2), tgt[:, 1:], ignore_index=self.pad)
        hyps = [beam_search(self.model, src[i:i + 1]).tolist() for i in range(src.shape[0])]
        return loss.item(), hyps


def validate(agent, valid_batches):
    total, replies = 0.0, []
    for src, tgt in valid_batches:
        loss, hyps = agent.eval_step(src.cuda(), tgt.cuda())
        total += loss
        replies.extend(hyps)
    return total / max(len(valid_batches), 1), replies
