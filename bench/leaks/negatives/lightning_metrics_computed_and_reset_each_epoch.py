"""torchmetrics objects updated every step, computed, logged and reset at each epoch end

Source: https://lightning.ai/docs/torchmetrics/stable/pages/lightning.html
Style: lightning
Kind: negative: torchmetrics metrics updated every step (reset at every epoch end)
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics.classification import MulticlassAccuracy, MulticlassF1Score


class TextClassifier(pl.LightningModule):
    def __init__(self, vocab=20_000, classes=5):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, 128)
        self.head = nn.Linear(128, classes)
        self.val_acc = MulticlassAccuracy(num_classes=classes)
        self.val_f1 = MulticlassF1Score(num_classes=classes, average="macro")

    def forward(self, tokens):
        return self.head(self.embed(tokens))

    def training_step(self, batch, batch_idx):
        tokens, labels = batch
        return nn.functional.cross_entropy(self(tokens), labels)

    def validation_step(self, batch, batch_idx):
        tokens, labels = batch
        preds = self(tokens).argmax(-1)
        self.val_acc.update(preds, labels)
        self.val_f1.update(preds, labels)

    def on_validation_epoch_end(self):
        self.log("val_acc", self.val_acc.compute())
        self.log("val_f1", self.val_f1.compute())
        self.val_acc.reset()
        self.val_f1.reset()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    data = TensorDataset(torch.randint(0, 20_000, (50_000, 64)), torch.randint(0, 5, (50_000,)))
    trainer = pl.Trainer(max_epochs=30)
    trainer.fit(TextClassifier(), DataLoader(data, batch_size=128, shuffle=True), DataLoader(data, batch_size=512))
