"""Greedy decoding for evaluation stores the decoder's attention maps, all under torch.no_grad()

Source: https://pytorch.org/tutorials/intermediate/seq2seq_translation_tutorial.html
Style: seq2seq
Kind: negative: decoder outputs and attentions collected in a loop (inference under no_grad)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SOS_token, EOS_token, MAX_LENGTH = 0, 1, 10


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)

    def forward(self, x):
        return self.gru(self.embedding(x))


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attn = nn.Linear(2 * hidden_size, 1)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)

    def forward_step(self, token, hidden, encoder_outputs):
        emb = self.embedding(token)
        scores = self.attn(torch.cat([hidden.transpose(0, 1).expand_as(encoder_outputs), encoder_outputs], -1))
        weights = F.softmax(scores.squeeze(-1), dim=-1).unsqueeze(1)
        context = torch.bmm(weights, encoder_outputs)
        output, hidden = self.gru(torch.cat([emb, context], -1), hidden)
        return self.out(output), hidden, weights


def evaluate(encoder, decoder, input_tensor):
    with torch.no_grad():
        encoder_outputs, hidden = encoder(input_tensor)
        token = torch.tensor([[SOS_token]])
        decoded, attentions = [], []
        for _ in range(MAX_LENGTH):
            output, hidden, attn = decoder.forward_step(token, hidden, encoder_outputs)
            attentions.append(attn)
            token = output.argmax(-1)
            if token.item() == EOS_token:
                break
            decoded.append(token.item())
    return decoded, torch.cat(attentions, dim=1)


if __name__ == "__main__":
    encoder, decoder = EncoderRNN(4000, 128).eval(), AttnDecoderRNN(128, 3000).eval()
    for i in range(10_000):
        words, attn = evaluate(encoder, decoder, torch.randint(2, 4000, (1, MAX_LENGTH)))
