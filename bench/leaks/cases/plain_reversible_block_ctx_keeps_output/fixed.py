"""Reversible residual network: the coupling Function keeps its output on ctx, and an unused exit head never frees it

Source: https://github.com/RobinBruegger/RevTorch/issues/1
Style: plain
Kind: output stored on an autograd Function's ctx (`ctx.y = y`) instead of save_for_backward; for a branch whose output never reaches the loss, backward never runs `del ctx.y`, and the output/ctx cycle keeps every step's activations alive
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ReversibleCouplingFn(torch.autograd.Function):
    """y1 = x1 + F(x2), y2 = x2 + G(y1); inputs are recomputed from the output in backward."""

    @staticmethod
    def forward(ctx, x, f_block, g_block):
        ctx.f_block, ctx.g_block = f_block, g_block
        with torch.no_grad():
            x1, x2 = x.chunk(2, dim=1)
            y1 = x1 + f_block(x2)
            y2 = x2 + g_block(y1)
            y = torch.cat([y1, y2], dim=1)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        y, = ctx.saved_tensors
        f_block, g_block = ctx.f_block, ctx.g_block
        gy1, gy2 = grad_y.chunk(2, dim=1)
        y1, y2 = y.detach().chunk(2, dim=1)
        with torch.enable_grad():
            y1_ = y1.requires_grad_(True)
            g_out = g_block(y1_)
            torch.autograd.backward(g_out, gy2)
        with torch.no_grad():
            x2 = y2 - g_out
            dy1 = gy1 + y1_.grad
        with torch.enable_grad():
            x2_ = x2.detach().requires_grad_(True)
            f_out = f_block(x2_)
            torch.autograd.backward(f_out, dy1)
        with torch.no_grad():
            dx2 = gy2 + x2_.grad
        return torch.cat([dy1, dx2], dim=1), None, None


def half_block(channels):
    return nn.Sequential(
        nn.BatchNorm2d(channels), nn.ReLU(inplace=False),
        nn.Conv2d(channels, channels, 3, padding=1),
    )


class ReversibleStage(nn.Module):
    def __init__(self, channels, depth):
        super().__init__()
        half = channels // 2
        self.fs = nn.ModuleList(half_block(half) for _ in range(depth))
        self.gs = nn.ModuleList(half_block(half) for _ in range(depth))

    def forward(self, x):
        for f_block, g_block in zip(self.fs, self.gs):
            x = ReversibleCouplingFn.apply(x, f_block, g_block)
        return x


class RevClassifier(nn.Module):
    def __init__(self, n_classes=100, width=128):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.stage1 = ReversibleStage(width, depth=4)
        self.stage2 = ReversibleStage(width, depth=4)
        self.head = nn.Linear(width, n_classes)
        self.early_exit = nn.Sequential(ReversibleStage(width, depth=2), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                        nn.Linear(width, n_classes))

    def forward(self, images):
        h = self.stage1(self.stem(images))
        early_logits = self.early_exit(h)  # monitored only, not trained in this phase
        h = self.stage2(h)
        logits = self.head(F.adaptive_avg_pool2d(h, 1).flatten(1))
        return logits, early_logits


def train(model, loader, epochs=90, lr=0.1, device="cuda"):
    model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    for epoch in range(epochs):
        model.train()
        agree, seen = 0, 0
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            logits, early_logits = model(images)
            loss = F.cross_entropy(logits, labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            agree += (early_logits.argmax(1) == logits.argmax(1)).sum().item()
            seen += labels.numel()
        print(f"epoch {epoch}: early-exit agreement {agree / max(seen, 1):.3f}")
