"""ImageNet training script ported to PyTorch 0.4: validation still relies on Variable(volatile=True) to turn autograd off

Source: https://github.com/pytorch/pytorch/issues/4932
Style: plain
Kind: evaluation forward records a graph nobody uses: `volatile=True` has no effect since the Variable/Tensor merge, so the validation loop, run under model.eval() only, builds a full ResNet graph for every batch and GPU memory climbs during the validation phase
"""
import time

import torch
import torch.nn as nn
import torchvision.models as models


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


def accuracy(output, target, topk=(1, 5)):
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
    return [correct[:k].reshape(-1).float().sum().item() * 100.0 / target.size(0) for k in topk]


def train_one_epoch(loader, model, criterion, optimizer):
    model.train()
    losses = AverageMeter()
    for images, target in loader:
        images, target = images.cuda(non_blocking=True), target.cuda(non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss.item(), images.size(0))
    return losses.avg


def validate(loader, model, criterion):
    model.eval()
    losses, top1, top5 = AverageMeter(), AverageMeter(), AverageMeter()
    end = time.time()
    with torch.no_grad():
        for images, target in loader:
            target = target.cuda(non_blocking=True)
            input_var = images.cuda(non_blocking=True)
            target_var = target
            output = model(input_var)
            loss = criterion(output, target_var)
            acc1, acc5 = accuracy(output, target)
            losses.update(loss.item(), images.size(0))
            top1.update(acc1, images.size(0))
            top5.update(acc5, images.size(0))
    print(f" * Acc@1 {top1.avg:.3f} Acc@5 {top5.avg:.3f} loss {losses.avg:.4f} ({time.time() - end:.0f}s)")
    return top1.avg


def main(train_loader, val_loader, arch="resnet50", epochs=90, lr=0.1):
    model = nn.DataParallel(models.__dict__[arch]()).cuda()
    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    best = 0.0
    for epoch in range(epochs):
        train_loss = train_one_epoch(train_loader, model, criterion, optimizer)
        acc1 = validate(val_loader, model, criterion)
        scheduler.step()
        print(f"epoch {epoch}: train loss {train_loss:.4f}")
        if acc1 > best:
            best = acc1
            torch.save({"epoch": epoch, "state_dict": model.state_dict(), "best_acc1": best}, "model_best.pth.tar")
