"""Metric learning with a cross-batch memory: embeddings of past batches are kept as extra negatives

Source: https://github.com/KevinMusgrave/pytorch-metric-learning/issues/421
Style: plain
Kind: negative: embeddings of every batch stored across steps in a memory bank (a fixed-size ring buffer allocated once, written with detached embeddings; nothing grows and no graph is kept)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class CrossBatchMemory(nn.Module):
    def __init__(self, embedding_size, memory_size=1024, margin=0.5):
        super().__init__()
        self.memory_size, self.margin = memory_size, margin
        self.register_buffer("embedding_memory", torch.zeros(memory_size, embedding_size))
        self.register_buffer("label_memory", torch.zeros(memory_size, dtype=torch.long))
        self.queue_idx = 0
        self.has_been_filled = False

    def add_to_memory(self, embeddings, labels):
        n = embeddings.shape[0]
        idx = (torch.arange(n, device=embeddings.device) + self.queue_idx) % self.memory_size
        self.embedding_memory[idx] = embeddings.detach()
        self.label_memory[idx] = labels.detach()
        prev = self.queue_idx
        self.queue_idx = (self.queue_idx + n) % self.memory_size
        if not self.has_been_filled and self.queue_idx <= prev:
            self.has_been_filled = True

    def forward(self, embeddings, labels):
        stored = self.memory_size if self.has_been_filled else self.queue_idx
        ref_emb = torch.cat([embeddings, self.embedding_memory[:stored]])
        ref_labels = torch.cat([labels, self.label_memory[:stored]])
        sims = embeddings @ ref_emb.t()
        same = labels[:, None] == ref_labels[None, :]
        same[:, : len(labels)].fill_diagonal_(False)
        pos = torch.where(same, 1 - sims, torch.zeros_like(sims)).sum(1) / same.sum(1).clamp(min=1)
        neg = F.relu(sims - self.margin).mul(~same).sum(1) / (~same).sum(1).clamp(min=1)
        self.add_to_memory(embeddings, labels)
        return (pos + neg).mean()


def main(train_loader, epochs=100, embedding_size=2048):
    device = "cuda"
    trunk = torchvision.models.resnet50(weights="IMAGENET1K_V2")
    trunk.fc = nn.Identity()
    embedder = nn.Linear(2048, embedding_size)
    model = nn.Sequential(trunk, embedder).to(device)
    loss_fn = CrossBatchMemory(embedding_size, memory_size=1024).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)
    for epoch in range(epochs):
        running = 0.0
        for images, labels in train_loader:
            images, labels = images.to(device), labels.to(device)
            embeddings = F.normalize(model(images), dim=-1)
            loss = loss_fn(embeddings, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item()
        print(f"epoch {epoch}: loss {running / len(train_loader):.4f}")
