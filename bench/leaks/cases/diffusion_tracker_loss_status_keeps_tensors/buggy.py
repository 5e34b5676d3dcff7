"""Diffusion-based object tracker: the loss status dict handed to the running-average meters holds graph-attached tensors

Source: https://github.com/VISION-SJTU/DiffusionTrack/issues/2
Style: diffusion
Kind: graph-attached loss tensors kept for the whole epoch: `compute_losses` puts the weighted loss tensors (not their values) in the status dict, and the trainer's averaging meters sum them step after step, so every step's graph stays referenced; RAM/VRAM grows until the process is killed
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.ops import generalized_box_iou


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


class DiffusionTrackActor:
    """Denoises noisy template boxes into search-region boxes (loss: GIoU + L1)."""

    def __init__(self, net, weights):
        self.net = net
        self.weights = weights

    def __call__(self, data):
        t = torch.randint(0, 1000, (data["search"].shape[0],), device=data["search"].device)
        noisy = self.net.q_sample(data["gt_boxes"], t)
        pred_boxes = self.net(data["template"], data["search"], noisy, t)
        return self.compute_losses(pred_boxes, data["gt_boxes"])

    def compute_losses(self, pred, gt):
        giou = (1.0 - torch.diag(generalized_box_iou(pred, gt))).mean()
        l1 = F.l1_loss(pred, gt)
        loss = self.weights["giou"] * giou + self.weights["l1"] * l1
        status = {"Loss/total": loss, "Loss/giou": giou, "Loss/l1": l1}  # leak: LL102
        return loss, status


def train_epoch(actor, loader, optimizer, device, epoch):
    meters = {}
    actor.net.train()
    for i, data in enumerate(loader, 1):
        data = {k: v.to(device) for k, v in data.items()}
        loss, status = actor(data)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(actor.net.parameters(), 0.1)
        optimizer.step()
        for name, val in status.items():
            meters.setdefault(name, AverageMeter()).update(val, data["search"].shape[0])
        if i % 50 == 0:
            print(f"[{epoch}: {i}/{len(loader)}] " +
                  " ".join(f"{k}: {float(m.avg):.4f}" for k, m in meters.items()))
    return {k: float(m.avg) for k, m in meters.items()}


def train(actor, loader, epochs=300, lr=1e-4):
    device = torch.device("cuda")
    actor.net.to(device)
    optimizer = torch.optim.AdamW(actor.net.parameters(), lr=lr, weight_decay=1e-4)
    for epoch in range(epochs):
        stats = train_epoch(actor, loader, optimizer, device, epoch)
        torch.save({"net": actor.net.state_dict(), "stats": stats}, f"ckpt_{epoch:03d}.pth")
