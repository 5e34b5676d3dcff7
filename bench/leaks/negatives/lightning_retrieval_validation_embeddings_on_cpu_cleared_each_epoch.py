"""Lightning retrieval model that collects validation embeddings on self for an epoch-end recall@k, on the CPU, cleared every epoch

Source: https://lightning.ai/docs/pytorch/stable/common/lightning_module.html#on-validation-epoch-end
Style: lightning
Kind: negative: resembles validation outputs kept on self across a whole evaluation (device accumulation) and a list on self that is never emptied; the embeddings are computed under Lightning's no-grad validation loop, moved to the CPU as they are appended, and the list is cleared at the end of every validation epoch, the pattern Lightning 2.0 documents in place of validation_epoch_end(outputs)
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class EmbeddingNet(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        backbone = torchvision.models.resnet50(weights="IMAGENET1K_V2")
        backbone.fc = nn.Identity()
        self.backbone = backbone
        self.proj = nn.Linear(2048, dim)

    def forward(self, x):
        return F.normalize(self.proj(self.backbone(x)), dim=-1)


class RetrievalModule(pl.LightningModule):
    def __init__(self, lr=3e-4, temperature=0.05, ks=(1, 5, 10)):
        super().__init__()
        self.save_hyperparameters()
        self.net = EmbeddingNet()
        self.val_embeddings = []
        self.val_labels = []

    def training_step(self, batch, batch_idx):
        view_a, view_b, _ = batch
        za, zb = self.net(view_a), self.net(view_b)
        logits = za @ zb.t() / self.hparams.temperature
        target = torch.arange(za.size(0), device=self.device)
        loss = (F.cross_entropy(logits, target) + F.cross_entropy(logits.t(), target)) / 2
        self.log("train/loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        images, labels = batch
        self.val_embeddings.append(self.net(images).cpu())
        self.val_labels.append(labels.cpu())

    def on_validation_epoch_end(self):
        emb = torch.cat(self.val_embeddings)
        labels = torch.cat(self.val_labels)
        sims = emb @ emb.t()
        sims.fill_diagonal_(-2.0)
        ranked = sims.topk(max(self.hparams.ks), dim=1).indices
        hits = labels[ranked] == labels[:, None]
        for k in self.hparams.ks:
            self.log(f"val/recall@{k}", hits[:, :k].any(dim=1).float().mean())
        self.val_embeddings.clear()
        self.val_labels.clear()

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=0.05)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.trainer.max_epochs)
        return [opt], [sched]


def main(datamodule, epochs=100):
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_epochs=epochs, precision="16-mixed")
    trainer.fit(RetrievalModule(), datamodule=datamodule)
