"""Weather-forecast LightningModule: a spectrum plotter accumulates every test batch's power spectra on the GPU

Source: https://github.com/meteofrance/py4cast/issues/7
Source: https://github.com/meteofrance/py4cast/pull/29
Style: lightning
Kind: device memory grows without a graph: the plotter's `update` appends each batch's power spectral densities (one per variable and lead time) to a list while they are still on the GPU, and only stacks them at epoch end; test on the full dataset drifts 30-100 MB per iteration and OOMs (fix: move to the CPU before accumulating)
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F


def radial_psd(field):
    spec = torch.fft.rfft2(field).abs().pow(2)
    h, w = spec.shape[-2:]
    ky = torch.fft.fftfreq(h, device=field.device).abs()[:, None]
    kx = torch.fft.rfftfreq((w - 1) * 2, device=field.device)[None, :]
    k = (ky**2 + kx**2).sqrt()
    bins = (k * h).long().clamp(max=h // 2 - 1)
    out = torch.zeros(*spec.shape[:-2], h // 2, device=field.device)
    return out.index_add_(-1, bins.flatten(), spec.flatten(-2)) / bins.numel()


class PSDPlotter:
    def __init__(self, var_names):
        self.var_names = var_names
        self.pred_psd, self.target_psd = [], []

    def update(self, pred, target):
        self.pred_psd.append(radial_psd(pred).mean(0).cpu())
        self.target_psd.append(radial_psd(target).mean(0).cpu())

    def on_step_end(self, logger, label):
        pred = torch.stack(self.pred_psd).mean(0).cpu()
        target = torch.stack(self.target_psd).mean(0).cpu()
        fig, axes = plt.subplots(1, len(self.var_names), figsize=(4 * len(self.var_names), 3))
        for i, (ax, name) in enumerate(zip(axes, self.var_names)):
            ax.loglog(target[-1, i], label="target")
            ax.loglog(pred[-1, i], label="forecast")
            ax.set_title(name)
        axes[0].legend()
        logger.experiment.add_figure(f"{label}/psd", fig)
        plt.close(fig)
        self.pred_psd.clear()
        self.target_psd.clear()


class Forecaster(pl.LightningModule):
    def __init__(self, net: nn.Module, var_names, num_pred_steps=12, lr=1e-3):
        super().__init__()
        self.net = net
        self.num_pred_steps = num_pred_steps
        self.lr = lr
        self.plotter = PSDPlotter(var_names)

    def rollout(self, state, forcing):
        preds = []
        for t in range(self.num_pred_steps):
            state = state + self.net(torch.cat([state, forcing[:, t]], dim=1))
            preds.append(state)
        return torch.stack(preds, dim=1)

    def training_step(self, batch, batch_idx):
        state, forcing, target = batch
        loss = F.mse_loss(self.rollout(state, forcing), target)
        self.log("train_loss", loss)
        return loss

    def test_step(self, batch, batch_idx):
        state, forcing, target = batch
        pred = self.rollout(state, forcing)
        self.log("test_rmse", F.mse_loss(pred, target).sqrt())
        self.plotter.update(pred, target)

    def on_test_epoch_end(self):
        self.plotter.on_step_end(self.logger, label="Test")

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)
