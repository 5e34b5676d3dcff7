"""A word language model keeps its hidden state across batches and repackages it every batch

Source: https://github.com/pytorch/examples/issues/103
Style: seq2seq
Kind: negative: RNN hidden state carried from batch to batch (detached by repackage_hidden)
"""
import math

import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, ntoken=33_278, ninp=650, nhid=650, nlayers=2, dropout=0.5):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nlayers, self.nhid = nlayers, nhid

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(input)), hidden)
        return self.decoder(self.drop(output)), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def train_epoch(model, train_data, criterion, lr, bptt=35, batch_size=20, clip=0.25):
    model.train()
    hidden = model.init_hidden(batch_size)
    total_loss = 0.0
    for i in range(0, train_data.size(0) - 1, bptt):
        seq_len = min(bptt, len(train_data) - 1 - i)
        data, targets = train_data[i:i + seq_len], train_data[i + 1:i + 1 + seq_len].reshape(-1)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, output.size(-1)), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
    return math.exp(total_loss / (train_data.size(0) // bptt))


if __name__ == "__main__":
    model, criterion = RNNModel(), nn.CrossEntropyLoss()
    train_data = torch.randint(0, 33_278, (46_479, 20))
    for epoch in range(40):
        print(epoch, train_epoch(model, train_data, criterion, lr=20.0))
