"""Test-time outputs gathered on self for on_test_epoch_end are never cleared between test runs

Source: https://github.com/NVIDIA-NeMo/Speech/pull/6433
Style: lightning
Kind: device memory grows without a graph: a list on self filled every test step, never cleared
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class PromptTuner(pl.LightningModule):
    def __init__(self, vocab=8000, dim=512):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.body = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)
        self.test_step_outputs = []

    def forward(self, tokens):
        out, _ = self.body(self.embed(tokens))
        return self.head(out)

    def training_step(self, batch, batch_idx):
        tokens, labels = batch
        logits = self(tokens)
        return nn.functional.cross_entropy(logits.transpose(1, 2), labels)

    def test_step(self, batch, batch_idx):
        tokens, labels = batch
        logits = self(tokens)
        loss = nn.functional.cross_entropy(logits.transpose(1, 2), labels)
        self.test_step_outputs.append({"loss": loss, "preds": logits.argmax(-1), "labels": labels})  # leak: new:device-accumulation
        return loss

    def on_test_epoch_end(self):
        preds = torch.cat([o["preds"] for o in self.test_step_outputs])
        labels = torch.cat([o["labels"] for o in self.test_step_outputs])
        self.log("test_loss", torch.stack([o["loss"] for o in self.test_step_outputs]).mean())
        self.log("test_token_acc", (preds == labels).float().mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-4)


if __name__ == "__main__":
    data = TensorDataset(torch.randint(0, 8000, (20_000, 256)), torch.randint(0, 8000, (20_000, 256)))
    model = PromptTuner()
    trainer = pl.Trainer(max_epochs=1, accelerator="auto")
    for test_set in range(10):
        trainer.fit(model, DataLoader(data, batch_size=32))
        trainer.test(model, DataLoader(data, batch_size=64))
