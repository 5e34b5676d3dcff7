"""Full-graph GAT node classifier: the validation pass records a graph over the whole Reddit-sized graph and runs out of memory

Source: https://github.com/dmlc/dgl/issues/745
Style: plain
Kind: evaluation forward records a graph nobody uses: `evaluate()` runs the attention network on the full graph under model.eval() but with autograd on, so every layer's attention coefficients and edge messages are kept for a backward that never comes; training on sampled blocks fits, validation OOMs
"""
import dgl
import torch
import torch.nn as nn
import torch.nn.functional as F
from dgl.nn import GATConv


class GAT(nn.Module):
    def __init__(self, in_feats, hidden, n_classes, heads=(8, 8, 1)):
        super().__init__()
        self.layers = nn.ModuleList([
            GATConv(in_feats, hidden, heads[0], activation=F.elu),
            GATConv(hidden * heads[0], hidden, heads[1], activation=F.elu),
            GATConv(hidden * heads[1], n_classes, heads[2]),
        ])

    def forward(self, graphs, h):
        for layer, g in zip(self.layers, graphs):
            h = layer(g, h)
            h = h.flatten(1) if h.dim() == 3 and h.shape[1] > 1 else h.mean(1)
        return h


def evaluate(model, graph, features, labels, mask):
    model.eval()
    with torch.no_grad():
        logits = model([graph] * len(model.layers), features)
    pred = logits[mask].argmax(1)
    return (pred == labels[mask]).float().mean().item()


def train(graph, features, labels, train_nids, val_mask, n_classes, device="cuda", epochs=30):
    model = GAT(features.shape[1], 64, n_classes).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=5e-4)
    sampler = dgl.dataloading.MultiLayerNeighborSampler([10, 10, 10])
    loader = dgl.dataloading.DataLoader(graph, train_nids, sampler, batch_size=1024, shuffle=True, device=device)
    full_graph = dgl.add_self_loop(graph).to(device)
    features, labels = features.to(device), labels.to(device)
    for epoch in range(epochs):
        model.train()
        for input_nodes, output_nodes, blocks in loader:
            logits = model(blocks, features[input_nodes])
            loss = F.cross_entropy(logits, labels[output_nodes])
            opt.zero_grad()
            loss.backward()
            opt.step()
        acc = evaluate(model, full_graph, features, labels, val_mask)
        print(f"epoch {epoch}: loss {loss.item():.4f} val acc {acc:.4f}")
    return model
