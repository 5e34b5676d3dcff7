"""Codec-token language model trained with accelerate: the epoch's average loss is summed from the loss tensors

Source: https://github.com/open-mmlab/Amphion/issues/263
Style: accelerate
Kind: loss accumulated across steps with its graph: `epoch_sum_loss += loss` in the trainer's epoch loop keeps every step's autograd graph (a decoder-only LM over codec tokens) reachable until the epoch ends; host memory climbs through each epoch (maintainers' fix: `loss.item()`)
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

VOCAB = 1024 + 256  # codec codes + phone tokens
CONTEXT = 512


class CodecLM(nn.Module):
    def __init__(self, dim=512, layers=8, heads=8):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.pos = nn.Parameter(torch.zeros(1, CONTEXT, dim))
        block = nn.TransformerEncoderLayer(dim, heads, 4 * dim, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(block, layers)
        self.head = nn.Linear(dim, VOCAB)

    def forward(self, tokens):
        causal = torch.triu(torch.full((tokens.size(1), tokens.size(1)), float("-inf"), device=tokens.device), 1)
        h = self.embed(tokens) + self.pos[:, : tokens.size(1)]
        return self.head(self.blocks(h, mask=causal))


class CodecLMTrainer:
    def __init__(self, model, train_loader, valid_loader, lr=1e-4, warmup=2000, total=200_000, grad_accum=2):
        self.accelerator = Accelerator(gradient_accumulation_steps=grad_accum, log_with="tensorboard", project_dir="runs")
        self.accelerator.init_trackers("codec_lm")
        self.base_lr, self.warmup, self.total, self.grad_accum = lr, warmup, total, grad_accum
        optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95))
        self.model, self.optimizer, self.train_loader, self.valid_loader = self.accelerator.prepare(
            model, optimizer, train_loader, valid_loader)
        self.step = 0
        self.epoch = 0

    def lr_at(self, it):
        if it < self.warmup:
            return self.base_lr * it / self.warmup
        ratio = min(1.0, (it - self.warmup) / max(1, self.total - self.warmup))
        return 0.1 * self.base_lr + 0.45 * self.base_lr * (1 + math.cos(math.pi * ratio))

    def _forward_step(self, batch):
        tokens = batch[0]
        logits = self.model(tokens[:, :-1])
        return F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))

    def _train_epoch(self):
        self.model.train()
        epoch_sum_loss = 0.0
        ema_loss = None
        for batch in self.train_loader:
            for group in self.optimizer.param_groups:
                group["lr"] = self.lr_at(self.step)
            with self.accelerator.accumulate(self.model):
                loss = self._forward_step(batch)
                current = loss.item()
                ema_loss = current if ema_loss is None else 0.99 * ema_loss + 0.01 * current
                self.accelerator.backward(loss)
                if self.accelerator.sync_gradients:
                    self.accelerator.clip_grad_norm_(self.model.parameters(), 1.0)
                self.optimizer.step()
                self.optimizer.zero_grad()
            if self.accelerator.sync_gradients:
                if self.step % 100 == 0:
                    self.accelerator.print(f"step {self.step} ema loss {ema_loss:.4f}")
                self.accelerator.log({"Step/Train Loss": loss, "Step/LR": self.optimizer.param_groups[0]["lr"]}, step=self.step)
                epoch_sum_loss += loss  # leak: LL101
                self.step += 1
        return epoch_sum_loss / len(self.train_loader) * self.grad_accum

    @torch.inference_mode()
    def _valid_epoch(self):
        self.model.eval()
        total = 0.0
        for batch in self.valid_loader:
            total += self._forward_step(batch).item()
        return total / len(self.valid_loader)

    def train_loop(self, epochs):
        for _ in range(epochs):
            train_loss = self._train_epoch()
            valid_loss = self._valid_epoch()
            self.accelerator.print(f"epoch {self.epoch}: train {float(train_loss):.4f} valid {valid_loss:.4f}")
            self.accelerator.log({"Epoch/Train Loss": float(train_loss), "Epoch/Valid Loss": valid_loss}, step=self.epoch)
            self.epoch += 1
        self.accelerator.end_training()


if __name__ == "__main__":
    train = TensorDataset(torch.randint(0, VOCAB, (4096, CONTEXT)))
    valid = TensorDataset(torch.randint(0, VOCAB, (256, CONTEXT)))
    trainer = CodecLMTrainer(CodecLM(), DataLoader(train, batch_size=8, shuffle=True), DataLoader(valid, batch_size=8))
    trainer.train_loop(epochs=20)
