"""A token-level Accuracy metric is constructed and moved to the GPU inside every training step

Source: https://github.com/Lightning-AI/torchmetrics/issues/1738
Style: lightning
Kind: a torchmetrics metric created every step and never reset or freed
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics import Accuracy

VOCAB = 30522


class MaskedLM(pl.LightningModule):
    def __init__(self, dim=256):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, 4 * dim, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.lm_head = nn.Linear(dim, VOCAB)
        self.token_accuracy = Accuracy(task="multiclass", num_classes=VOCAB, ignore_index=-100, average="micro")

    def training_step(self, batch, batch_idx):
        input_ids, labels = batch
        logits = self.lm_head(self.encoder(self.embed(input_ids)))
        loss = nn.functional.cross_entropy(logits.view(-1, VOCAB), labels.view(-1), ignore_index=-100)
        self.token_accuracy(logits.argmax(-1), labels)
        self.log("train/loss", loss, prog_bar=True)
        self.log("train/token_acc", self.token_accuracy, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=5e-4)


if __name__ == "__main__":
    ids = torch.randint(0, VOCAB, (20_000, 128))
    labels = torch.where(torch.rand(20_000, 128) < 0.15, ids, torch.full_like(ids, -100))
    trainer = pl.Trainer(max_epochs=5, accelerator="auto")
    trainer.fit(MaskedLM(), DataLoader(TensorDataset(ids, labels), batch_size=8, shuffle=True))
