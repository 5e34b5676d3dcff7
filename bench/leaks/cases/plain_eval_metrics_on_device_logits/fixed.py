"""Evaluation builds its per-example logits tensor on the device for the whole dataset before computing metrics

Source: https://github.com/google-research/runtime-error-prediction/pull/64
Style: plain
Kind: device memory grows without a graph: all logits of an evaluation kept on the GPU
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class ProgramClassifier(nn.Module):
    def __init__(self, vocab=5000, dim=256, errors=1000):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.encoder = nn.LSTM(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, errors)

    def forward(self, tokens):
        out, _ = self.encoder(self.embed(tokens))
        return self.head(out[:, -1])


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    all_logits = torch.empty(0, 1000)
    all_targets = torch.empty(0, dtype=torch.long)
    for tokens, targets in loader:
        logits = model(tokens.to(device))
        all_logits = torch.cat([all_logits, logits.cpu()])
        all_targets = torch.cat([all_targets, targets])
    probs = all_logits.softmax(-1)
    top1 = (probs.argmax(-1) == all_targets).float().mean().item()
    top5 = (probs.topk(5, -1).indices == all_targets[:, None]).any(-1).float().mean().item()
    return {"top1": top1, "top5": top5}


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = ProgramClassifier().to(device)
    data = TensorDataset(torch.randint(0, 5000, (500_000, 64)), torch.randint(0, 1000, (500_000,)))
    print(evaluate(model, DataLoader(data, batch_size=512), device))
