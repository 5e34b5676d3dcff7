"""Intent classifier trainer: evaluation runs with autograd on and the best model's weights are kept as a second copy in GPU memory

Source: https://github.com/facebookresearch/pytext/pull/204
Style: plain
Kind: two GPU memory wastes found together: the evaluation pass records a graph nobody uses (no torch.no_grad()), and the state_dict of the best model so far is deep-copied and held on the GPU for the whole run; together they push a model that trains fine into OOM (fix: no_grad for evaluation, best model saved to disk and reloaded at the end)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BiLSTMIntentModel(nn.Module):
    def __init__(self, vocab_size, n_intents, emb=300, hidden=512):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, emb, padding_idx=0)
        self.lstm = nn.LSTM(emb, hidden, num_layers=2, batch_first=True, bidirectional=True, dropout=0.3)
        self.attn = nn.Linear(2 * hidden, 1)
        self.out = nn.Linear(2 * hidden, n_intents)

    def forward(self, tokens):
        h, _ = self.lstm(self.embed(tokens))
        weights = self.attn(h).squeeze(-1).masked_fill(tokens == 0, -1e9).softmax(-1)
        return self.out((weights.unsqueeze(-1) * h).sum(1))


class Trainer:
    def __init__(self, model, lr=1e-3, epochs=30, device="cuda", save_path="best_model.pt"):
        self.model = model.to(device)
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.epochs, self.device, self.save_path = epochs, device, save_path

    def run_epoch(self, loader, train):
        self.model.train(train)
        total, correct, seen = 0.0, 0, 0
        for tokens, labels in loader:
            tokens, labels = tokens.to(self.device), labels.to(self.device)
            with torch.set_grad_enabled(train):
                logits = self.model(tokens)
                loss = F.cross_entropy(logits, labels)
            if train:
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            total += loss.item() * labels.size(0)
            correct += (logits.argmax(-1) == labels).sum().item()
            seen += labels.size(0)
        return total / seen, correct / seen

    def train(self, train_loader, eval_loader):
        best_acc = -1.0
        for epoch in range(self.epochs):
            train_loss, _ = self.run_epoch(train_loader, train=True)
            eval_loss, eval_acc = self.run_epoch(eval_loader, train=False)
            print(f"epoch {epoch}: train {train_loss:.4f} eval {eval_loss:.4f} acc {eval_acc:.4f}")
            if eval_acc > best_acc:
                best_acc = eval_acc
                torch.save(self.model.state_dict(), self.save_path)
        self.model.load_state_dict(torch.load(self.save_path, map_location=self.device))
        return self.model
