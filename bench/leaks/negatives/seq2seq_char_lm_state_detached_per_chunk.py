"""A character-level LSTM language model carries its state across chunks and detaches it before every chunk

Source: https://github.com/yunjey/pytorch-tutorial/issues/90
Style: seq2seq
Kind: negative: RNN hidden and cell states fed into the next batch (detached at the start of each chunk: truncated BPTT)
"""
import torch
import torch.nn as nn


class RNNLM(nn.Module):
    def __init__(self, vocab_size, embed_size=128, hidden_size=1024, num_layers=1):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_size)
        self.lstm = nn.LSTM(embed_size, hidden_size, num_layers, batch_first=True)
        self.linear = nn.Linear(hidden_size, vocab_size)

    def forward(self, x, h):
        out, (h, c) = self.lstm(self.embed(x), h)
        return self.linear(out.reshape(-1, out.size(2))), (h, c)


def detach(states):
    return [state.detach() for state in states]


def batchify(ids, batch_size):
    num_batches = ids.size(0) // batch_size
    return ids[: num_batches * batch_size].view(batch_size, -1)


def main(num_epochs=5, batch_size=20, seq_length=30, hidden_size=1024, num_layers=1):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    vocab_size = 10_000
    ids = batchify(torch.randint(0, vocab_size, (929_589,)), batch_size).to(device)
    model = RNNLM(vocab_size, hidden_size=hidden_size, num_layers=num_layers).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.002)
    for epoch in range(num_epochs):
        states = (torch.zeros(num_layers, batch_size, hidden_size, device=device),
                  torch.zeros(num_layers, batch_size, hidden_size, device=device))
        for i in range(0, ids.size(1) - seq_length, seq_length):
            inputs = ids[:, i:i + seq_length]
            targets = ids[:, (i + 1):(i + 1) + seq_length]
            states = detach(states)
            outputs, states = model(inputs, states)
            loss = criterion(outputs, targets.reshape(-1))
            model.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            step = (i + 1) // seq_length
            if step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} ppl {torch.exp(loss).item():.2f}")


if __name__ == "__main__":
    main()
