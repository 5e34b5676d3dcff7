"""A LightningModule language model carries the LSTM state across training steps on self, detached each step

Source: https://github.com/Lightning-AI/pytorch-lightning/issues/655
Style: lightning
Kind: negative: RNN hidden state fed into the next training step through an attribute (detached right after the forward, so each step's graph ends with the step: truncated BPTT)
"""
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F


def detach_state(state):
    return tuple(s.detach() for s in state)


class WordLM(pl.LightningModule):
    def __init__(self, vocab_size=33278, emb=400, hidden=1150, layers=3, lr=20.0, clip=0.25):
        super().__init__()
        self.save_hyperparameters()
        self.embed = nn.Embedding(vocab_size, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=layers, dropout=0.3, batch_first=True)
        self.proj = nn.Linear(hidden, emb)
        self.decoder = nn.Linear(emb, vocab_size)
        self.decoder.weight = self.embed.weight
        self.previous_state = None
        self.val_state = None

    def forward(self, tokens, state=None):
        out, state = self.lstm(self.embed(tokens), state)
        return self.decoder(self.proj(out)), state

    def on_train_epoch_start(self):
        self.previous_state = None  # the corpus is read from the start again

    def training_step(self, batch, batch_idx):
        inputs, targets = batch  # consecutive chunks of one long token stream
        logits, state = self(inputs, self.previous_state)
        self.previous_state = detach_state(state)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        self.log("train_ppl", loss.detach().exp(), prog_bar=True)
        return loss

    def on_validation_epoch_start(self):
        self.val_state = None

    def validation_step(self, batch, batch_idx):
        inputs, targets = batch
        logits, self.val_state = self(inputs, self.val_state)
        self.log("val_loss", F.cross_entropy(logits.flatten(0, 1), targets.flatten()), prog_bar=True)

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=self.hparams.lr)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.25, patience=0)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "monitor": "val_loss"}}


def main(train_loader, val_loader):
    # the loaders must not shuffle: chunk i+1 continues chunk i for every row of the batch
    trainer = pl.Trainer(max_epochs=40, gradient_clip_val=0.25, accelerator="auto")
    trainer.fit(WordLM(), train_loader, val_loader)
