"""DeepSpeech2-style ASR evaluation: the KenLM scorer for CTC beam search is built inside the decode helper, once per batch

Source: https://github.com/PaddlePaddle/PaddleSpeech/issues/169
Style: seq2seq
Kind: a scorer (an n-gram language model of about 840 MB) built on every call of a function that runs many times: each batch's decode loads a new `Scorer`, and every load leaves about 10 MB behind, so host memory climbs through a long test set
"""
import argparse
import json

import torch
import torch.nn as nn
from swig_decoders import Scorer, ctc_beam_search_decoder_batch


class DeepSpeech2(nn.Module):
    def __init__(self, n_mels=161, hidden=1024, vocab_size=29, num_rnn_layers=3):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, 32, (41, 11), stride=(2, 2), padding=(20, 5)), nn.BatchNorm2d(32), nn.Hardtanh(0, 20),
            nn.Conv2d(32, 32, (21, 11), stride=(2, 1), padding=(10, 5)), nn.BatchNorm2d(32), nn.Hardtanh(0, 20),
        )
        self.rnn = nn.GRU(32 * ((n_mels + 1) // 4 + 1), hidden, num_layers=num_rnn_layers, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hidden, vocab_size)

    def forward(self, feats):
        x = self.conv(feats.unsqueeze(1))
        b, c, f, t = x.shape
        x = x.permute(0, 3, 1, 2).reshape(b, t, c * f)
        x, _ = self.rnn(x)
        return self.fc(x).softmax(-1)


def decode_batch(probs, lengths, vocab, args):
    scorer = Scorer(args.alpha, args.beta, args.lang_model_path, vocab)  # leak: new:model-per-call
    probs_split = [p[:n].tolist() for p, n in zip(probs.cpu(), lengths.tolist())]
    results = ctc_beam_search_decoder_batch(
        probs_split=probs_split,
        vocabulary=vocab,
        beam_size=args.beam_size,
        num_processes=args.num_proc_bsearch,
        cutoff_prob=args.cutoff_prob,
        cutoff_top_n=args.cutoff_top_n,
        ext_scoring_func=scorer,
    )
    return [r[0][1] for r in results]


def word_errors(ref, hyp):
    r, h = ref.split(), hyp.split()
    d = list(range(len(h) + 1))
    for i in range(1, len(r) + 1):
        prev, d[0] = d[0], i
        for j in range(1, len(h) + 1):
            cur = min(d[j] + 1, d[j - 1] + 1, prev + (r[i - 1] != h[j - 1]))
            prev, d[j] = d[j], cur
    return d[len(h)], len(r)


def main(args):
    vocab = [line.rstrip("\n") for line in open(args.vocab_path)]
    model = DeepSpeech2(vocab_size=len(vocab) + 1).cuda().eval()
    model.load_state_dict(torch.load(args.checkpoint, map_location="cuda"))
    manifest = [json.loads(line) for line in open(args.manifest)]
    errors = words = 0
    for start in range(0, len(manifest), args.batch_size):
        items = manifest[start:start + args.batch_size]
        feats = [torch.load(item["feat_path"]) for item in items]
        lengths = torch.tensor([f.shape[-1] for f in feats])
        padded = nn.utils.rnn.pad_sequence([f.T for f in feats], batch_first=True).transpose(1, 2).cuda()
        with torch.no_grad():
            probs = model(padded)
        out_lengths = (lengths + 1) // 2
        hyps = decode_batch(probs, out_lengths, vocab, args)
        for item, hyp in zip(items, hyps):
            e, n = word_errors(item["text"], hyp)
            errors, words = errors + e, words + n
        print(f"[{start + len(items)}/{len(manifest)}] WER so far {errors / max(words, 1):.4f}")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--manifest", default="data/librispeech/manifest.test-clean")
    p.add_argument("--vocab_path", default="data/librispeech/vocab.txt")
    p.add_argument("--checkpoint", default="checkpoints/ds2_librispeech.pt")
    p.add_argument("--lang_model_path", default="models/lm/common_crawl_00.prune01111.trie.klm")
    p.add_argument("--alpha", type=float, default=2.5)
    p.add_argument("--beta", type=float, default=0.3)
    p.add_argument("--beam_size", type=int, default=500)
    p.add_argument("--cutoff_prob", type=float, default=1.0)
    p.add_argument("--cutoff_top_n", type=int, default=40)
    p.add_argument("--num_proc_bsearch", type=int, default=8)
    p.add_argument("--batch_size", type=int, default=64)
    main(p.parse_args())
