"""Hybrid ASR recipe: the recurrent acoustic model's forward runs with autograd on for dev and test chunks

Source: https://github.com/mravanelli/pytorch-kaldi/pull/41
Style: seq2seq
Kind: evaluation forward records a graph nobody uses: the shared forward helper runs the GRU acoustic model for dev/test chunks without torch.no_grad(), so every dev batch builds a full recurrent graph over hundreds of frames; GPU memory climbs during the dev pass and forces a smaller dev batch size
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class GRUAcousticModel(nn.Module):
    def __init__(self, n_feats=40, hidden=550, layers=4, n_senones=3480, dropout=0.2):
        super().__init__()
        self.rnn = nn.GRU(n_feats, hidden, num_layers=layers, dropout=dropout, bidirectional=True)
        self.proj = nn.Linear(2 * hidden, n_senones)

    def forward(self, feats):
        out, _ = self.rnn(feats)
        return self.proj(out)


def chunk_batches(feats, labels, batch_size, seq_len, shuffle, rng):
    n_seq = len(feats) // seq_len
    feats = feats[: n_seq * seq_len].reshape(n_seq, seq_len, -1)
    labels = labels[: n_seq * seq_len].reshape(n_seq, seq_len)
    order = rng.permutation(n_seq) if shuffle else np.arange(n_seq)
    for i in range(0, n_seq, batch_size):
        idx = order[i:i + batch_size]
        yield torch.from_numpy(feats[idx]).float().transpose(0, 1), torch.from_numpy(labels[idx]).long().transpose(0, 1)


def forward_chunk(model, feats, labels, device):
    feats, labels = feats.to(device), labels.to(device)
    logits = model(feats)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))
    err = (logits.argmax(-1) != labels).float().mean()
    return loss, err


def run_chunk(model, optimizer, feats, labels, args, device, rng, is_train):
    model.train(is_train)
    tot_loss, tot_err, n = 0.0, 0.0, 0
    batch_size = args.batch_size_train if is_train else args.batch_size_dev
    for x, y in chunk_batches(feats, labels, batch_size, args.seq_len, is_train, rng):
        if is_train:
            loss, err = forward_chunk(model, x, y, device)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
        else:
            loss, err = forward_chunk(model, x, y, device)  # leak: LL201
        tot_loss += loss.item()
        tot_err += err.item()
        n += 1
    return tot_loss / max(n, 1), tot_err / max(n, 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="fmllr_chunks.npz")
    parser.add_argument("--epochs", type=int, default=24)
    parser.add_argument("--seq_len", type=int, default=400)
    parser.add_argument("--batch_size_train", type=int, default=16)
    parser.add_argument("--batch_size_dev", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.0004)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = np.load(args.data)
    model = GRUAcousticModel(n_feats=data["train_feats"].shape[1]).to(device)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=args.lr, alpha=0.95, eps=1e-8)
    rng = np.random.default_rng(1234)
    best_dev = float("inf")
    for ep in range(args.epochs):
        tr_loss, tr_err = run_chunk(model, optimizer, data["train_feats"], data["train_labels"], args, device, rng, True)
        dev_loss, dev_err = run_chunk(model, optimizer, data["dev_feats"], data["dev_labels"], args, device, rng, False)
        print(f"ep={ep} tr=[{tr_loss:.3f} err={tr_err:.3f}] dev=[{dev_loss:.3f} err={dev_err:.3f}]")
        if dev_err < best_dev:
            best_dev = dev_err
            torch.save(model.state_dict(), "final_architecture.pkl")
        else:
            for group in optimizer.param_groups:
                group["lr"] *= 0.5


if __name__ == "__main__":
    main()
