"""The epoch loss is accumulated from loss.item(), a Python float

Source: https://discuss.pytorch.org/t/cuda-out-of-memory-after-more-than-8000-iterators/27253
Style: plain
Kind: negative: loss accumulated across steps (as a float)
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class KGEmbedding(nn.Module):
    def __init__(self, entities=40_000, relations=200, dim=200):
        super().__init__()
        self.ent = nn.Embedding(entities, dim)
        self.rel = nn.Embedding(relations, dim)

    def forward(self, head, relation, tail):
        return (self.ent(head) + self.rel(relation) - self.ent(tail)).norm(p=1, dim=-1)


def main(epochs=100, margin=1.0):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = KGEmbedding().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    triples = torch.stack([torch.randint(0, 40_000, (500_000,)), torch.randint(0, 200, (500_000,)), torch.randint(0, 40_000, (500_000,))], 1)
    loader = DataLoader(TensorDataset(triples), batch_size=1024, shuffle=True)
    for epoch in range(epochs):
        loss_sum = 0.0
        for (batch,) in loader:
            head, relation, tail = batch.to(device).unbind(1)
            corrupt = torch.randint(0, 40_000, tail.shape, device=device)
            loss = torch.relu(margin + model(head, relation, tail) - model(head, relation, corrupt)).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum += loss.item()
        print(f"epoch {epoch}: {loss_sum / len(loader):.4f}")


if __name__ == "__main__":
    main()
