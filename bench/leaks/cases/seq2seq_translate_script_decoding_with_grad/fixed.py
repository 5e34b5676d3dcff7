"""translate.py decodes test batches with non-volatile inputs; it cannot use the training batch size without OOM

Source: https://github.com/pytorch/examples/issues/105
Style: seq2seq
Kind: inference forward records graphs nobody uses; the greedy decoder carries its hidden state with the graph through every generated token
"""
import argparse

import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.rnn = nn.LSTM(dim, dim // 2, num_layers=2, bidirectional=True)

    def forward(self, src):
        context, (h, c) = self.rnn(self.emb(src))
        merge = lambda s: torch.cat([s[0::2], s[1::2]], dim=-1)
        return context, (merge(h), merge(c))


class Decoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.rnn = nn.LSTM(dim, dim, num_layers=2)
        self.attn = nn.Linear(dim, dim, bias=False)
        self.out = nn.Linear(2 * dim, vocab)

    def forward(self, token, hidden, context):
        output, hidden = self.rnn(self.emb(token).unsqueeze(0), hidden)
        scores = torch.einsum("bd,sbd->bs", self.attn(output[0]), context)
        attended = torch.einsum("bs,sbd->bd", scores.softmax(-1), context)
        return self.out(torch.cat([output[0], attended], -1)).log_softmax(-1), hidden


class Translator:
    def __init__(self, encoder, decoder, bos=2, eos=3, max_len=150):
        self.encoder, self.decoder = encoder.eval(), decoder.eval()
        self.bos, self.eos, self.max_len = bos, eos, max_len

    @torch.no_grad()
    def translate_batch(self, src_batch):
        context, hidden = self.encoder(src_batch)
        token = torch.full((src_batch.shape[1],), self.bos, dtype=torch.long, device=src_batch.device)
        finished = torch.zeros_like(token, dtype=torch.bool)
        hyps = []
        for _ in range(self.max_len):
            logp, hidden = self.decoder(token, hidden, context)
            token = logp.argmax(-1)
            hyps.append(token)
            finished |= token.eq(self.eos)
            if finished.all():
                break
        return torch.stack(hyps, dim=1).tolist()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-batch_size", type=int, default=64)
    parser.add_argument("-src_lines", type=int, default=3000)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    encoder, decoder = Encoder(50000, 500).to(device), Decoder(50000, 500).to(device)
    translator = Translator(encoder, decoder)
    src = torch.randint(4, 50000, (50, args.src_lines))
    with open("pred.txt", "w") as out:
        for start in range(0, args.src_lines, args.batch_size):
            for hyp in translator.translate_batch(src[:, start:start + args.batch_size].to(device)):
                out.write(" ".join(map(str, hyp)) + "\n")


if __name__ == "__main__":
    main()
