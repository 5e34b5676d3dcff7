"""A character RNN sums the per-timestep losses of one sequence and backpropagates once

Source: https://github.com/spro/practical-pytorch/pull/29
Style: seq2seq
Kind: negative: loss += criterion(...) inside a loop over time steps (one graph, one backward per sequence)
"""
import random
import string

import torch
import torch.nn as nn

all_characters = string.printable
n_characters = len(all_characters)


class CharRNN(nn.Module):
    def __init__(self, hidden_size=100, n_layers=1):
        super().__init__()
        self.hidden_size, self.n_layers = hidden_size, n_layers
        self.encoder = nn.Embedding(n_characters, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, n_layers)
        self.decoder = nn.Linear(hidden_size, n_characters)

    def forward(self, inp, hidden):
        output, hidden = self.gru(self.encoder(inp.view(1, -1)).view(1, 1, -1), hidden)
        return self.decoder(output.view(1, -1)), hidden

    def init_hidden(self):
        return torch.zeros(self.n_layers, 1, self.hidden_size)


def char_tensor(text):
    return torch.tensor([all_characters.index(c) for c in text], dtype=torch.long)


def random_training_set(corpus, chunk_len=200):
    start = random.randint(0, len(corpus) - chunk_len - 1)
    chunk = corpus[start:start + chunk_len + 1]
    return char_tensor(chunk[:-1]), char_tensor(chunk[1:])


def train(decoder, optimizer, criterion, inp, target, chunk_len=200):
    hidden = decoder.init_hidden()
    decoder.zero_grad()
    loss = 0
    for c in range(chunk_len):
        output, hidden = decoder(inp[c], hidden)
        loss += criterion(output, target[c].unsqueeze(0))
    loss.backward()
    optimizer.step()
    return loss.item() / chunk_len


if __name__ == "__main__":
    corpus = "".join(random.choice(string.ascii_letters + " ") for _ in range(100_000))
    decoder = CharRNN()
    optimizer = torch.optim.Adam(decoder.parameters(), lr=0.005)
    criterion = nn.CrossEntropyLoss()
    all_losses, loss_avg = [], 0
    for epoch in range(1, 2001):
        loss_avg += train(decoder, optimizer, criterion, *random_training_set(corpus))
        if epoch % 100 == 0:
            all_losses.append(loss_avg / 100)
            loss_avg = 0
