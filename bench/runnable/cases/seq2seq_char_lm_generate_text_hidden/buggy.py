"""A character language model's generate_text carries the LSTM hidden state with autograd recording

Source: https://github.com/flairNLP/flair/issues/210
Style: seq2seq
Kind: RNN state in an inference loop carried with its graph
Runnable from: bench/leaks/cases/seq2seq_char_lm_generate_text_hidden
Run: --step __main__:LanguageModel.forward
"""
import torch
import torch.nn as nn


class LanguageModel(nn.Module):
    def __init__(self, dictionary, hidden_size=128, nlayers=1, embedding_size=32):
        super().__init__()
        self.dictionary = dictionary
        self.idx2item = {i: c for c, i in dictionary.items()}
        self.hidden_size, self.nlayers = hidden_size, nlayers
        self.encoder = nn.Embedding(len(dictionary), embedding_size)
        self.rnn = nn.LSTM(embedding_size, hidden_size, nlayers)
        self.decoder = nn.Linear(hidden_size, len(dictionary))

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.hidden_size), weight.new_zeros(self.nlayers, bsz, self.hidden_size))

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return self.decoder(output), hidden

    def generate_text(self, prefix="\n", number_of_characters=1000, temperature=1.0):
        hidden = self.init_hidden(1)
        characters = []
        for char in prefix[:-1]:
            _, hidden = self.forward(torch.tensor([[self.dictionary[char]]]), hidden)  # leak: LL103
        input = torch.tensor([[self.dictionary[prefix[-1]]]])
        for _ in range(number_of_characters):
            prediction, hidden = self.forward(input, hidden)  # leak: LL103
            word_weights = prediction.squeeze().div(temperature).exp()
            word_idx = torch.multinomial(word_weights, 1)[0]
            input = word_idx.view(1, 1)
            characters.append(self.idx2item[word_idx.item()])
        return prefix + "".join(characters)


if __name__ == "__main__":
    torch.manual_seed(0)
    alphabet = "abcdefghijklmnopqrstuvwxyz .,\n"
    lm = LanguageModel({c: i for i, c in enumerate(alphabet)})
    lm.eval()
    for _ in range(2):
        print(lm.generate_text("the ", number_of_characters=200))
