"""A metric-learning validation callback plots the worst queries for every metric and never closes the figures

Source: https://github.com/OML-Team/open-metric-learning/issues/216
Style: lightning
Kind: pyplot figures created every validation (one per metric) by the retrieval metric's plotting helper, logged as images and never closed: pyplot keeps all of them ("More than 20 figures have been opened")
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from pytorch_lightning.loggers import TensorBoardLogger, WandbLogger


class RetrievalMetric:
    def __init__(self, top_k=(1, 5), n_worst=5, n_gallery_shown=5):
        self.top_k, self.n_worst, self.n_shown = top_k, n_worst, n_gallery_shown
        self.reset()

    def reset(self):
        self.embeddings, self.labels, self.images = [], [], []

    def update(self, embeddings, labels, images):
        self.embeddings.append(embeddings.cpu())
        self.labels.append(labels.cpu())
        self.images.append(images.cpu())

    def compute(self):
        emb, labels = torch.cat(self.embeddings), torch.cat(self.labels)
        dist = torch.cdist(emb, emb).fill_diagonal_(float("inf"))
        self.ranking = dist.argsort(dim=1)
        hits = labels[self.ranking] == labels[:, None]
        self.per_query = {f"cmc@{k}": hits[:, :k].any(1).float() for k in self.top_k}
        return {name: v.mean().item() for name, v in self.per_query.items()}

    def plot_queries(self, query_ids):
        images = torch.cat(self.images)
        fig = plt.figure(figsize=(2 * (self.n_shown + 1), 2 * len(query_ids)))
        for row, q in enumerate(query_ids):
            shown = [q] + self.ranking[q, : self.n_shown].tolist()
            for col, idx in enumerate(shown):
                ax = fig.add_subplot(len(query_ids), self.n_shown + 1, row * (self.n_shown + 1) + col + 1)
                ax.imshow(images[idx].permute(1, 2, 0).clamp(0, 1).numpy())
                ax.axis("off")
        return fig

    def visualize(self):
        figures, names = [], []
        for name, values in self.per_query.items():
            worst = values.argsort()[: self.n_worst].tolist()
            figures.append(self.plot_queries(worst))
            names.append(f"worst queries by {name}")
        return figures, names


def figure_to_array(fig):
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()


class RetrievalValCallback(pl.Callback):
    def __init__(self, metric, log_images=True):
        self.metric, self.log_images = metric, log_images

    def on_validation_epoch_start(self, trainer, pl_module):
        self.metric.reset()

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        self.metric.update(outputs["embeddings"], outputs["labels"], outputs["images"])

    def on_validation_epoch_end(self, trainer, pl_module):
        pl_module.log_dict(self.metric.compute())
        if self.log_images:
            for fig, name in zip(*self.metric.visualize()):
                image = figure_to_array(fig)
                if isinstance(pl_module.logger, WandbLogger):
                    pl_module.logger.log_image(key=name, images=[image])
                elif isinstance(pl_module.logger, TensorBoardLogger):
                    pl_module.logger.experiment.add_image(name, image.transpose(2, 0, 1), trainer.current_epoch)
                plt.close(fig)


class EmbeddingModel(pl.LightningModule):
    def __init__(self, dim=128, n_classes=100, lr=1e-3):
        super().__init__()
        self.backbone = torch.nn.Sequential(
            torch.nn.Conv2d(3, 32, 3, stride=2), torch.nn.ReLU(),
            torch.nn.Conv2d(32, 64, 3, stride=2), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, dim),
        )
        self.classifier = torch.nn.Linear(dim, n_classes)
        self.lr = lr

    def forward(self, x):
        return F.normalize(self.backbone(x), dim=-1)

    def training_step(self, batch, batch_idx):
        images, labels = batch
        loss = F.cross_entropy(self.classifier(self(images)) * 16.0, labels)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        images, labels = batch
        return {"embeddings": self(images), "labels": labels, "images": images}

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


def main(train_loader, val_loader, epochs=200):
    trainer = pl.Trainer(max_epochs=epochs, logger=TensorBoardLogger("logs"),
                         callbacks=[RetrievalValCallback(RetrievalMetric())])
    trainer.fit(EmbeddingModel(), train_loader, val_loader)
