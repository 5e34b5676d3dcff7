"""A single-object segmentation recipe returns the per-batch Dice metric as a graph-attached tensor and sums it over the epoch

Source: https://github.com/PacktPublishing/PyTorch-Computer-Vision-Cookbook/issues/11
Style: plain
Kind: metric accumulated across steps with its graph: the Dice score is computed from the training output with grad on, summed into the epoch metric and appended to the metric history, so every training batch's graph of every epoch stays alive; CUDA OOM after a few dozen epochs
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class SegNet(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.enc = nn.ModuleList([nn.Conv2d(1, c, 3, padding=1), nn.Conv2d(c, 2 * c, 3, padding=1),
                                  nn.Conv2d(2 * c, 4 * c, 3, padding=1)])
        self.dec = nn.ModuleList([nn.Conv2d(4 * c, 2 * c, 3, padding=1), nn.Conv2d(2 * c, c, 3, padding=1)])
        self.out = nn.Conv2d(c, 1, 3, padding=1)

    def forward(self, x):
        for conv in self.enc:
            x = F.max_pool2d(F.relu(conv(x)), 2)
        for conv in self.dec:
            x = F.relu(conv(F.interpolate(x, scale_factor=2)))
        return self.out(F.interpolate(x, scale_factor=2))


def dice_loss(pred, target, smooth=1e-5):
    inter = (pred * target).sum(dim=(2, 3))
    union = pred.sum(dim=(2, 3)) + target.sum(dim=(2, 3))
    dice = 2.0 * (inter + smooth) / (union + smooth)
    return (1.0 - dice).sum(), dice.sum()


def loss_func(logits, target):
    bce = F.binary_cross_entropy_with_logits(logits, target, reduction="sum")
    dlv, _ = dice_loss(torch.sigmoid(logits), target)
    return bce + dlv


def loss_batch(logits, target, opt=None):
    loss = loss_func(logits, target)
    with torch.no_grad():
        _, metric_b = dice_loss(torch.sigmoid(logits), target)
    if opt is not None:
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item(), metric_b


def loss_epoch(model, loader, opt=None):
    running_loss, running_metric = 0.0, 0.0
    for xb, yb in loader:
        xb, yb = xb.to(device), yb.to(device)
        loss_b, metric_b = loss_batch(model(xb), yb, opt)
        running_loss += loss_b
        running_metric += metric_b
    n = float(len(loader.dataset))
    return running_loss / n, running_metric / n


def train_val(model, train_dl, val_dl, epochs=150):
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=20)
    loss_history, metric_history = {"train": [], "val": []}, {"train": [], "val": []}
    best_loss, best_weights = float("inf"), copy.deepcopy(model.state_dict())
    for epoch in range(epochs):
        model.train()
        train_loss, train_metric = loss_epoch(model, train_dl, opt)
        loss_history["train"].append(train_loss)
        metric_history["train"].append(train_metric)
        model.eval()
        with torch.no_grad():
            val_loss, val_metric = loss_epoch(model, val_dl)
        loss_history["val"].append(val_loss)
        metric_history["val"].append(val_metric)
        if val_loss < best_loss:
            best_loss, best_weights = val_loss, copy.deepcopy(model.state_dict())
        sched.step(val_loss)
        print(f"epoch {epoch}: train loss {train_loss:.4f} val loss {val_loss:.4f} dice {float(val_metric):.3f}")
    model.load_state_dict(best_weights)
    return model, loss_history, metric_history


if __name__ == "__main__":
    imgs = torch.rand(2_000, 1, 128, 192)
    masks = (imgs > 0.7).float()
    train_dl = DataLoader(TensorDataset(imgs[:1600], masks[:1600]), batch_size=8, shuffle=True)
    val_dl = DataLoader(TensorDataset(imgs[1600:], masks[1600:]), batch_size=16)
    train_val(SegNet().to(device), train_dl, val_dl)
