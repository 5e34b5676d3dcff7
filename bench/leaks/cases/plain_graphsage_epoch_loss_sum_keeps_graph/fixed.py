"""GraphSAGE minibatch node classification (DGL example shape): the epoch loss is summed as a tensor straight from the loss

Source: https://github.com/dmlc/dgl/issues/5302
Style: plain
Kind: loss accumulated across steps with the graph: `total_loss += loss` adds every minibatch loss to a running tensor that stays part of the autograd graph, so each step's graph (sampled blocks, features, activations) is kept until the epoch ends
"""
import argparse

import dgl
import dgl.nn as dglnn
import torch
import torch.nn as nn
import torch.nn.functional as F
from ogb.nodeproppred import DglNodePropPredDataset


class SAGE(nn.Module):
    def __init__(self, in_feats, hidden, n_classes, n_layers=3, dropout=0.5):
        super().__init__()
        self.layers = nn.ModuleList()
        self.layers.append(dglnn.SAGEConv(in_feats, hidden, "mean"))
        for _ in range(n_layers - 2):
            self.layers.append(dglnn.SAGEConv(hidden, hidden, "mean"))
        self.layers.append(dglnn.SAGEConv(hidden, n_classes, "mean"))
        self.dropout = nn.Dropout(dropout)

    def forward(self, blocks, x):
        h = x
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if i != len(self.layers) - 1:
                h = self.dropout(F.relu(h))
        return h


@torch.no_grad()
def evaluate(model, graph, loader):
    model.eval()
    correct = total = 0
    for _, _, blocks in loader:
        x = blocks[0].srcdata["feat"]
        y = blocks[-1].dstdata["label"]
        correct += (model(blocks, x).argmax(1) == y).sum().item()
        total += y.numel()
    return correct / max(total, 1)


def train(args):
    dataset = DglNodePropPredDataset("ogbn-products", root=args.root)
    graph, labels = dataset[0]
    graph.ndata["label"] = labels.squeeze()
    split = dataset.get_idx_split()
    device = torch.device("cuda")
    graph = graph.to(device)
    train_idx, valid_idx = split["train"].to(device), split["valid"].to(device)

    sampler = dgl.dataloading.NeighborSampler([10, 10, 10], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    train_loader = dgl.dataloading.DataLoader(graph, train_idx, sampler, device=device, batch_size=1024, shuffle=True, drop_last=False, use_uva=False)
    valid_loader = dgl.dataloading.DataLoader(graph, valid_idx, sampler, device=device, batch_size=4096, shuffle=False)

    model = SAGE(graph.ndata["feat"].shape[1], 256, dataset.num_classes).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=5e-4)

    for epoch in range(args.epochs):
        model.train()
        total_loss = 0
        for it, (_, _, blocks) in enumerate(train_loader):
            x = blocks[0].srcdata["feat"]
            y = blocks[-1].dstdata["label"]
            y_hat = model(blocks, x)
            loss = F.cross_entropy(y_hat, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_loss += loss.detach()
        acc = evaluate(model, graph, valid_loader)
        print(f"Epoch {epoch:03d} | Loss {float(total_loss) / (it + 1):.4f} | Val acc {acc:.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default="dataset")
    parser.add_argument("--epochs", type=int, default=20)
    train(parser.parse_args())
