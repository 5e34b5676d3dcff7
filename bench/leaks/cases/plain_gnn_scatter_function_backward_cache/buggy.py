"""A custom scatter-multiply autograd Function keeps its inputs and output in ctx.backward_cache

Source: https://github.com/dmlc/dgl/pull/1060
Style: plain
Kind: outputs stored on an autograd ctx instead of save_for_backward: out -> grad_fn -> ctx -> out is a cycle, freed only by the cyclic GC
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ScatterMulEdges(torch.autograd.Function):
    """out = tanh(sum over incoming edges of src_feat[src] * edge_weight), with a hand-written backward."""

    @staticmethod
    def forward(ctx, node_feat, edge_weight, src, dst, num_nodes):
        messages = node_feat[src] * edge_weight.unsqueeze(-1)
        agg = node_feat.new_zeros(num_nodes, node_feat.shape[1])
        agg.index_add_(0, dst, messages)
        out = torch.tanh(agg)
        ctx.backward_cache = (node_feat, edge_weight, src, dst, out)  # leak: new:ctx-attribute
        return out

    @staticmethod
    def backward(ctx, grad_out):
        node_feat, edge_weight, src, dst, out = ctx.backward_cache
        grad_agg = grad_out * (1 - out ** 2)
        grad_msg = grad_agg[dst]
        grad_feat = torch.zeros_like(node_feat)
        grad_feat.index_add_(0, src, grad_msg * edge_weight.unsqueeze(-1))
        grad_weight = (grad_msg * node_feat[src]).sum(-1)
        return grad_feat, grad_weight, None, None, None


class WeightedGCNLayer(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)
        self.edge_mlp = nn.Linear(2 * in_dim, 1)

    def forward(self, h, src, dst):
        w = torch.sigmoid(self.edge_mlp(torch.cat([h[src], h[dst]], dim=-1))).squeeze(-1)
        agg = ScatterMulEdges.apply(h, w, src, dst, h.shape[0])
        return F.relu(self.lin(agg + h))


class GCN(nn.Module):
    def __init__(self, in_dim, hidden, classes, layers=3):
        super().__init__()
        dims = [in_dim] + [hidden] * layers
        self.layers = nn.ModuleList(WeightedGCNLayer(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.out = nn.Linear(hidden, classes)

    def forward(self, h, src, dst):
        for layer in self.layers:
            h = layer(h, src, dst)
        return self.out(h)


def random_graph(num_nodes, num_edges, device):
    src = torch.randint(0, num_nodes, (num_edges,), device=device)
    dst = torch.randint(0, num_nodes, (num_edges,), device=device)
    return src, dst


def main(epochs=500):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    num_nodes = 50_000
    feats = torch.randn(num_nodes, 128, device=device)
    labels = torch.randint(0, 40, (num_nodes,), device=device)
    src, dst = random_graph(num_nodes, 1_000_000, device)
    model = GCN(128, 256, 40).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(epochs):
        logits = model(feats, src, dst)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if epoch % 20 == 0:
            print(epoch, loss.item(), torch.cuda.memory_allocated() if device == "cuda" else 0)


if __name__ == "__main__":
    main()
