"""Attention LSTM encoder-decoder for time series: evaluation during training saves a prediction plot every logging step

Source: https://github.com/JulesBelveze/time-series-autoencoder/issues/48
Source: https://github.com/JulesBelveze/time-series-autoencoder/pull/49
Style: seq2seq
Kind: pyplot figure created on every evaluation and never closed: evaluate() runs every `logging_steps` optimizer steps from the training loop and draws predictions vs targets with plt.figure() + savefig, so pyplot keeps one more figure (and its line data) per evaluation until host memory runs out
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class AttnEncoder(nn.Module):
    def __init__(self, n_features, hidden=64):
        super().__init__()
        self.lstm = nn.LSTM(n_features, hidden, batch_first=True)
        self.attn = nn.Linear(hidden + n_features, 1)

    def forward(self, x):
        h, _ = self.lstm(x)
        scores = self.attn(torch.cat([h, x], dim=-1)).softmax(dim=1)
        return h, scores


class AttnDecoder(nn.Module):
    def __init__(self, hidden=64, out_dim=1):
        super().__init__()
        self.lstm = nn.LSTM(hidden + 1, hidden, batch_first=True)
        self.out = nn.Linear(2 * hidden, out_dim)

    def forward(self, enc_h, scores, y_hist):
        context = (enc_h * scores).sum(dim=1, keepdim=True).expand(-1, y_hist.size(1), -1)
        dec_h, _ = self.lstm(torch.cat([context, y_hist], dim=-1))
        return self.out(torch.cat([dec_h[:, -1], context[:, -1]], dim=-1))


class AutoEncForecast(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.encoder, self.decoder = AttnEncoder(n_features), AttnDecoder()

    def forward(self, features, y_hist):
        enc_h, scores = self.encoder(features)
        return self.decoder(enc_h, scores, y_hist)


def evaluate(test_loader, criterion, model, output_dir):
    model.eval()
    preds, targets, eval_loss = [], [], 0.0
    with torch.no_grad():
        for features, y_hist, target in test_loader:
            out = model(features.to(device), y_hist.to(device))
            eval_loss += criterion(out, target.to(device)).item()
            preds.append(out.squeeze(1).cpu())
            targets.append(target.squeeze(1).cpu())
    preds, targets = torch.cat(preds), torch.cat(targets)
    plt.figure(figsize=(14, 4))
    plt.plot(preds.numpy(), linewidth=0.3)
    plt.plot(targets.numpy(), linewidth=0.3)
    plt.savefig(os.path.join(output_dir, "preds.png"))
    plt.close()
    model.train()
    return {"loss": eval_loss / len(test_loader), "mse": torch.mean((preds - targets) ** 2).item()}


def train(train_loader, test_loader, model, epochs=100, logging_steps=50, grad_accum=1, output_dir="output"):
    os.makedirs(output_dir, exist_ok=True)
    criterion = nn.MSELoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    global_step, train_loss = 0, 0.0
    for epoch in range(epochs):
        for i, (features, y_hist, target) in enumerate(train_loader):
            model.train()
            out = model(features.to(device), y_hist.to(device))
            loss = criterion(out, target.to(device)) / grad_accum
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            train_loss += loss.item()
            if (i + 1) % grad_accum == 0:
                optimizer.step()
                optimizer.zero_grad()
                global_step += 1
                if global_step % logging_steps == 0:
                    results = evaluate(test_loader, criterion, model, output_dir)
                    print(f"step {global_step}: train {train_loss / global_step:.5f} eval {results['loss']:.5f}")


def windows(series, seq_len=60):
    feats = torch.stack([series[i:i + seq_len] for i in range(len(series) - seq_len)])
    y_hist = feats[:, :-1, :1]
    return feats[:, :-1], y_hist, feats[:, -1, :1]


if __name__ == "__main__":
    series = torch.cumsum(torch.randn(20000, 8), dim=0) * 0.01
    train_set, test_set = TensorDataset(*windows(series[:16000])), TensorDataset(*windows(series[16000:]))
    model = AutoEncForecast(n_features=8).to(device)
    train(DataLoader(train_set, batch_size=64, shuffle=True), DataLoader(test_set, batch_size=256), model)
