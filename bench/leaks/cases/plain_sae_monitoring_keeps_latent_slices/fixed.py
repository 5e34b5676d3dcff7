"""Sparse autoencoder training with detailed monitoring: a strided slice of every batch's codes is logged on the GPU

Source: https://github.com/KempnerInstitute/overcomplete/issues/5
Style: plain
Kind: device memory grows without a graph: logs["z"] gets z.detach()[::10] every step, a view that pins the whole [batch, n_concepts] code tensor on the GPU for the rest of training
"""
from collections import defaultdict

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class TopKSAE(nn.Module):
    def __init__(self, d_model=768, n_concepts=16384, top_k=32):
        super().__init__()
        self.encoder = nn.Linear(d_model, n_concepts)
        self.dictionary = nn.Parameter(torch.randn(n_concepts, d_model) / d_model**0.5)
        self.top_k = top_k

    def get_dictionary(self):
        return self.dictionary / self.dictionary.norm(dim=-1, keepdim=True)

    def forward(self, x):
        z_pre = self.encoder(x)
        values, indices = z_pre.topk(self.top_k, dim=-1)
        z = torch.zeros_like(z_pre).scatter(-1, indices, values.relu())
        return z_pre, z, z @ self.get_dictionary()


def mse_l1(x, x_hat, z_pre, z, dictionary, l1=1e-4):
    return (x - x_hat).square().mean() + l1 * z.abs().sum(-1).mean()


def log_metrics(monitoring, logs, model, z, loss, optimizer):
    if monitoring == 0:
        return
    logs["lr"].append(optimizer.param_groups[0]["lr"])
    logs["step_loss"].append(loss.item())
    if monitoring > 1:
        logs["z_l2"].append(z.detach().norm(dim=-1).mean().item())
        logs["dead_codes"].append((z.detach().abs().sum(0) == 0).float().mean().item())
        with torch.no_grad():
            logs["dictionary_norms"].append(model.get_dictionary().norm(dim=-1).mean().item())
        for name, param in model.named_parameters():
            if param.grad is not None:
                logs[f"grad_norm_{name}"].append(param.grad.norm().item())


def train_sae(model, dataloader, criterion, optimizer, nb_epochs=20, clip_grad=1.0, monitoring=2, device="cuda"):
    logs = defaultdict(list)
    for epoch in range(nb_epochs):
        model.train()
        for (x,) in dataloader:
            x = x.to(device, non_blocking=True)
            optimizer.zero_grad()
            z_pre, z, x_hat = model(x)
            loss = criterion(x, x_hat, z_pre, z, model.get_dictionary())
            loss.backward()
            if clip_grad:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad)
            optimizer.step()
            log_metrics(monitoring, logs, model, z, loss, optimizer)
        print(f"epoch {epoch}: loss {sum(logs['step_loss'][-len(dataloader):]) / len(dataloader):.4f}")
    return logs


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    activations = torch.randn(200_000, 768)
    loader = DataLoader(TensorDataset(activations), batch_size=4096, shuffle=True, pin_memory=device == "cuda")
    model = TopKSAE().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    logs = train_sae(model, loader, mse_l1, optimizer, nb_epochs=20, monitoring=2, device=device)
    torch.save(dict(logs), "sae_logs.pt")


if __name__ == "__main__":
    main()
