"""An LSTM-CRF tagger keeps its hidden state on the module and feeds it into every forward

Source: https://github.com/LiyuanLucasLiu/LM-LSTM-CRF/issues/18
Style: seq2seq
Kind: state fed into the next step: self.hidden carried inside forward()
"""
import torch
import torch.nn as nn


class LSTMTagger(nn.Module):
    def __init__(self, vocab=30_000, emb=100, hidden=200, tags=17, batch_size=10):
        super().__init__()
        self.hidden_dim = hidden
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden // 2, bidirectional=True)
        self.hidden2tag = nn.Linear(hidden, tags)
        self.transitions = nn.Parameter(torch.randn(tags, tags))
        self.hidden = self.init_hidden(batch_size)

    def init_hidden(self, batch_size):
        return (torch.zeros(2, batch_size, self.hidden_dim // 2), torch.zeros(2, batch_size, self.hidden_dim // 2))

    def forward(self, sentence):
        embeds = self.embed(sentence)
        lstm_out, hidden = self.lstm(embeds, self.hidden)
        self.hidden = tuple(h.detach() for h in hidden)
        return self.hidden2tag(lstm_out)

    def neg_log_likelihood(self, sentence, tags):
        feats = self(sentence)
        emission = feats.gather(2, tags.unsqueeze(-1)).squeeze(-1).sum(0)
        transition = self.transitions[tags[:-1], tags[1:]].sum(0)
        log_z = torch.logsumexp(feats, dim=-1).sum(0)
        return (log_z - emission - transition).mean()


if __name__ == "__main__":
    model = LSTMTagger()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.015, momentum=0.9)
    for epoch in range(50):
        for _ in range(1400):
            sentence, tags = torch.randint(0, 30_000, (40, 10)), torch.randint(0, 17, (40, 10))
            optimizer.zero_grad()
            loss = model.neg_log_likelihood(sentence, tags)
            loss.backward()
            optimizer.step()
