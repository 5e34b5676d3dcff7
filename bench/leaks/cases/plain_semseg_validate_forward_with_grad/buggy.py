"""Semantic segmentation validation runs output = model(input) with autograd on; OOM after the first validation

Source: https://github.com/hszhao/semseg/issues/60
Style: plain
Kind: evaluation forward records a graph nobody uses (model.eval() but no torch.no_grad())
"""
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class AverageMeter:
    def __init__(self):
        self.val = self.sum = self.count = self.avg = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class PSPHead(nn.Module):
    def __init__(self, classes=150, ch=64):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, ch, 3, 2, 1), nn.ReLU(), nn.Conv2d(ch, 2 * ch, 3, 2, 1), nn.ReLU())
        self.pools = nn.ModuleList([nn.Sequential(nn.AdaptiveAvgPool2d(s), nn.Conv2d(2 * ch, ch // 2, 1)) for s in (1, 2, 3, 6)])
        self.cls = nn.Conv2d(2 * ch + 2 * ch, classes, 1)

    def forward(self, x):
        h, w = x.shape[-2:]
        f = self.backbone(x)
        pyramid = [F.interpolate(p(f), f.shape[-2:], mode="bilinear", align_corners=True) for p in self.pools]
        return F.interpolate(self.cls(torch.cat([f] + pyramid, 1)), (h, w), mode="bilinear", align_corners=True)


def intersection_and_union(output, target, k, ignore_index=255):
    output = output[target != ignore_index]
    target = target[target != ignore_index]
    inter = output[output == target]
    area_inter = torch.histc(inter.float(), bins=k, min=0, max=k - 1)
    area_output = torch.histc(output.float(), bins=k, min=0, max=k - 1)
    area_target = torch.histc(target.float(), bins=k, min=0, max=k - 1)
    return area_inter, area_output + area_target - area_inter, area_target


def validate(val_loader, model, criterion, classes=150):
    loss_meter, inter_meter, union_meter = AverageMeter(), AverageMeter(), AverageMeter()
    model.eval()
    end = time.time()
    for i, (input, target) in enumerate(val_loader):
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        output = model(input)  # leak: LL201
        loss = criterion(output, target)
        output = output.max(1)[1]
        inter, union, _ = intersection_and_union(output, target, classes)
        inter_meter.update(inter.cpu().numpy())
        union_meter.update(union.cpu().numpy())
        loss_meter.update(loss.item(), input.size(0))
        if i % 10 == 0:
            print(f"val [{i}/{len(val_loader)}] loss {loss_meter.val:.4f} ({time.time() - end:.1f}s)")
            end = time.time()
    iou = inter_meter.sum / (union_meter.sum + 1e-10)
    return loss_meter.avg, float(np.mean(iou))


def main(epochs=100):
    model = PSPHead().cuda()
    criterion = nn.CrossEntropyLoss(ignore_index=255)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    train = TensorDataset(torch.rand(512, 3, 473, 473), torch.randint(0, 150, (512, 473, 473)))
    val = TensorDataset(torch.rand(256, 3, 473, 473), torch.randint(0, 150, (256, 473, 473)))
    train_loader = DataLoader(train, batch_size=8, shuffle=True)
    val_loader = DataLoader(val, batch_size=16)
    for epoch in range(epochs):
        model.train()
        for input, target in train_loader:
            loss = criterion(model(input.cuda()), target.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_loss, miou = validate(val_loader, model, criterion)
        print(f"epoch {epoch}: val loss {val_loss:.4f} mIoU {miou:.4f}")


if __name__ == "__main__":
    main()
