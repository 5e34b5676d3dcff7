"""Feature-matching LightningModule: validation steps draw match figures that the epoch-end hook logs and then closes

Source: https://github.com/zju3dv/LoFTR/issues/69
Style: lightning
Kind: negative: resembles pyplot figures created on every validation step and never closed (LL303) and per-step outputs kept for the epoch end; figures are drawn only every `val_plot_interval` batches (a fixed number per epoch), handed to validation_epoch_end, logged and released with plt.close('all'); the other per-step outputs are numpy arrays and detached CPU scalars
"""
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from matplotlib import pyplot as plt


class CoarseMatcher(nn.Module):
    def __init__(self, dim=128):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(1, 64, 3, 2, 1), nn.ReLU(), nn.Conv2d(64, dim, 3, 2, 1))

    def forward(self, img0, img1):
        f0 = self.backbone(img0).flatten(2).transpose(1, 2)
        f1 = self.backbone(img1).flatten(2).transpose(1, 2)
        sim = torch.einsum("bnd,bmd->bnm", f0, f1) / f0.size(-1) ** 0.5
        return sim.softmax(dim=1) * sim.softmax(dim=2)


def make_matching_figure(img0, img1, conf):
    fig, axes = plt.subplots(1, 3, figsize=(12, 4), dpi=75)
    axes[0].imshow(img0, cmap="gray")
    axes[1].imshow(img1, cmap="gray")
    axes[2].imshow(conf, cmap="viridis")
    for ax in axes:
        ax.axis("off")
    return fig


class PLMatcher(pl.LightningModule):
    def __init__(self, n_val_pairs_to_plot=8, lr=1e-3):
        super().__init__()
        self.matcher = CoarseMatcher()
        self.n_vals_plot = n_val_pairs_to_plot
        self.lr = lr

    def _loss(self, conf, gt):
        return F.binary_cross_entropy(conf.clamp(1e-6, 1 - 1e-6), gt)

    def training_step(self, batch, batch_idx):
        img0, img1, gt = batch
        loss = self._loss(self.matcher(img0, img1), gt)
        self.log("train/loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        img0, img1, gt = batch
        conf = self.matcher(img0, img1)
        loss = self._loss(conf, gt)
        precision = ((conf > 0.2).float() * gt).sum(dim=(1, 2)) / (conf > 0.2).float().sum(dim=(1, 2)).clamp(min=1)
        val_plot_interval = max(self.trainer.num_val_batches[0] // self.n_vals_plot, 1)
        figures = []
        if batch_idx % val_plot_interval == 0:
            figures = [make_matching_figure(img0[0, 0].cpu().numpy(), img1[0, 0].cpu().numpy(), conf[0].cpu().numpy())]
        return {"loss_scalars": {"loss": loss.detach().cpu()}, "precision": precision.cpu().numpy(), "figures": figures}

    def validation_epoch_end(self, outputs):
        losses = defaultdict(list)
        for o in outputs:
            for k, v in o["loss_scalars"].items():
                losses[k].append(v)
        precision = np.concatenate([o["precision"] for o in outputs])
        figures = [fig for o in outputs for fig in o["figures"]]
        for k, v in losses.items():
            self.logger.experiment.add_scalar(f"val/avg_{k}", torch.stack(v).mean(), global_step=self.current_epoch)
        self.logger.experiment.add_scalar("val/precision", float(precision.mean()), global_step=self.current_epoch)
        for idx, fig in enumerate(figures):
            self.logger.experiment.add_figure(f"val_match/pair-{idx}", fig, self.current_epoch, close=True)
        plt.close("all")
        self.log("val_precision", float(precision.mean()))

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)


def make_loader(n, size=64, shuffle=False):
    img0 = torch.rand(n, 1, size, size)
    img1 = torch.roll(img0, shifts=4, dims=3)
    cells = (size // 4) ** 2
    gt = torch.eye(cells).expand(n, cells, cells).contiguous()
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(img0, img1, gt), batch_size=4, shuffle=shuffle)


if __name__ == "__main__":
    trainer = pl.Trainer(max_epochs=50, accelerator="auto", log_every_n_steps=20)
    trainer.fit(PLMatcher(), make_loader(800, shuffle=True), make_loader(200))
