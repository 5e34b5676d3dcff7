"""Per-term losses are summed as tensors within one iteration; only .item() values outlive it

Source: https://github.com/JIA-Lab-research/DecoupleNet/issues/3
Style: plain
Kind: negative: loss terms added with += inside the step (freed before the next step)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SegNet(nn.Module):
    def __init__(self, classes=19):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 64, 3, 2, 1), nn.ReLU(), nn.Conv2d(64, 128, 3, 2, 1), nn.ReLU())
        self.main_head = nn.Conv2d(128, classes, 1)
        self.aux_head = nn.Conv2d(128, classes, 1)

    def forward(self, x):
        h = self.backbone(x)
        return self.main_head(h), self.aux_head(h)


def train(steps=40_000):
    model = SegNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=2.5e-4, momentum=0.9)
    log = {"loss_main": 0.0, "loss_aux": 0.0}
    for step in range(steps):
        src, src_label = torch.rand(2, 3, 512, 1024), torch.randint(0, 19, (2, 128, 256))
        tgt = torch.rand(2, 3, 512, 1024)
        loss = 0
        main_out, aux_out = model(src)
        loss_main = F.cross_entropy(main_out, src_label)
        loss_aux = F.cross_entropy(aux_out, src_label)
        loss += loss_main
        loss += 0.1 * loss_aux
        tgt_main, _ = model(tgt)
        loss += 0.01 * -(tgt_main.softmax(1) * tgt_main.log_softmax(1)).sum(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log["loss_main"] += loss_main.item()
        log["loss_aux"] += loss_aux.item()
        if step % 100 == 99:
            print(step, {k: v / 100 for k, v in log.items()})
            log = {k: 0.0 for k in log}


if __name__ == "__main__":
    train()
