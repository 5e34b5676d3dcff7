"""A writing-editing network backpropagates each pass's loss with retain_graph=True

Source: https://github.com/EagleW/Writing-editing-Network/issues/3
Style: seq2seq
Kind: retain_graph=True in a loop where nothing reuses the graph afterwards
"""
import torch
import torch.nn as nn


class DraftEditor(nn.Module):
    def __init__(self, vocab=20_000, d=512):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.encoder = nn.GRU(d, d, batch_first=True)
        self.decoder = nn.GRU(2 * d, d, batch_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, title, prev_draft, target_in):
        _, h = self.encoder(self.embed(title))
        draft_ctx = self.embed(prev_draft).mean(1, keepdim=True).expand(-1, target_in.shape[1], -1)
        dec, _ = self.decoder(torch.cat([self.embed(target_in), draft_ctx], -1), h)
        return self.out(dec)


def train_epoch(model, optimizer, batches, num_passes=3):
    criterion = nn.CrossEntropyLoss(ignore_index=0)
    total = 0.0
    for title, abstract in batches:
        prev_draft = torch.zeros_like(abstract[:, :-1])
        for p in range(num_passes):
            logits = model(title, prev_draft, abstract[:, :-1])
            loss = criterion(logits.reshape(-1, logits.shape[-1]), abstract[:, 1:].reshape(-1))
            optimizer.zero_grad()
            loss.backward(retain_graph=True)  # leak: LL104
            optimizer.step()
            prev_draft = logits.argmax(-1)
            total += loss.item()
    return total / (len(batches) * num_passes)


if __name__ == "__main__":
    model = DraftEditor()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = [(torch.randint(1, 20_000, (32, 20)), torch.randint(1, 20_000, (32, 200))) for _ in range(500)]
    for epoch in range(15):
        print(epoch, train_epoch(model, optimizer, batches))
