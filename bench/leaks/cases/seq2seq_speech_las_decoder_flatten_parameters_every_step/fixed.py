"""Listen-attend-spell speech recognizer: the attention decoder calls flatten_parameters() on its LSTM at every decoding step

Source: https://github.com/clovaai/ClovaCall/pull/6
Style: seq2seq
Kind: `self.rnn.flatten_parameters()` inside `forward_step`, which runs once per output token: under nn.DataParallel each call re-packs the replicated LSTM weights into a fresh contiguous buffer, and memory leaks step after step (fix: delete the call from forward_step)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Listener(nn.Module):
    def __init__(self, n_mels=80, hidden=256, layers=3):
        super().__init__()
        self.rnn = nn.LSTM(n_mels, hidden, layers, batch_first=True, bidirectional=True, dropout=0.3)

    def forward(self, feats):
        self.rnn.flatten_parameters()
        out, _ = self.rnn(feats)
        return out


class DecoderRNN(nn.Module):
    def __init__(self, vocab_size, enc_dim=512, hidden=512, layers=2, sos_id=1, max_len=150):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, hidden)
        self.rnn = nn.LSTM(hidden + enc_dim, hidden, layers, batch_first=True, dropout=0.3)
        self.query = nn.Linear(hidden, enc_dim)
        self.out = nn.Linear(hidden + enc_dim, vocab_size)
        self.sos_id, self.max_len = sos_id, max_len

    def forward_step(self, token, hidden, context, enc_out):
        emb = self.embedding(token).unsqueeze(1)
        output, hidden = self.rnn(torch.cat([emb, context], dim=-1), hidden)
        scores = torch.bmm(self.query(output), enc_out.transpose(1, 2))
        attn = F.softmax(scores, dim=-1)
        context = torch.bmm(attn, enc_out)
        logits = self.out(torch.cat([output, context], dim=-1)).squeeze(1)
        return F.log_softmax(logits, dim=-1), hidden, context

    def forward(self, enc_out, targets=None, teacher_forcing=0.9):
        batch = enc_out.size(0)
        steps = targets.size(1) - 1 if targets is not None else self.max_len
        token = torch.full((batch,), self.sos_id, dtype=torch.long, device=enc_out.device)
        context = enc_out.new_zeros(batch, 1, enc_out.size(-1))
        hidden, outputs = None, []
        for t in range(steps):
            logp, hidden, context = self.forward_step(token, hidden, context, enc_out)
            outputs.append(logp)
            use_tf = targets is not None and torch.rand(1).item() < teacher_forcing
            token = targets[:, t + 1] if use_tf else logp.argmax(-1)
        return torch.stack(outputs, dim=1)


class LAS(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.listener = Listener()
        self.speller = DecoderRNN(vocab_size)

    def forward(self, feats, targets=None):
        return self.speller(self.listener(feats), targets)


def train(model, loader, vocab_size, epochs=100, pad_id=0):
    model = nn.DataParallel(model).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    for epoch in range(epochs):
        total = 0.0
        for feats, targets in loader:
            feats, targets = feats.cuda(), targets.cuda()
            logp = model(feats, targets)
            loss = F.nll_loss(logp.reshape(-1, vocab_size), targets[:, 1:].reshape(-1), ignore_index=pad_id)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 400)
            opt.step()
            total += loss.item()
        print(f"epoch {epoch}: loss {total / len(loader):.3f}")
