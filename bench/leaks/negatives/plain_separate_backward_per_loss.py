"""Self-training runs one backward for the source batch and another for the mixed batch

Source: https://github.com/lhoyer/DAFormer/issues/48
Style: plain
Kind: negative: two backward calls per iteration on separate graphs (nothing retained across steps)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Segmenter(nn.Module):
    def __init__(self, classes=19):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 3, 2, 1), nn.ReLU(), nn.Conv2d(64, classes, 1))

    def forward(self, x):
        return F.interpolate(self.net(x), size=x.shape[-2:], mode="bilinear", align_corners=False)


def train(iters=40_000):
    student, teacher = Segmenter(), Segmenter()
    teacher.load_state_dict(student.state_dict())
    optimizer = torch.optim.AdamW(student.parameters(), lr=6e-5)
    for it in range(iters):
        src, src_gt = torch.rand(2, 3, 512, 512), torch.randint(0, 19, (2, 512, 512))
        tgt = torch.rand(2, 3, 512, 512)
        optimizer.zero_grad()
        src_loss = F.cross_entropy(student(src), src_gt)
        src_loss.backward()
        with torch.no_grad():
            pseudo = teacher(tgt).argmax(1)
        mask = (torch.rand(2, 1, 512, 512) > 0.5).float()
        mixed = mask * src + (1 - mask) * tgt
        mixed_gt = torch.where(mask[:, 0].bool(), src_gt, pseudo)
        mix_loss = F.cross_entropy(student(mixed), mixed_gt)
        mix_loss.backward()
        optimizer.step()
        with torch.no_grad():
            for tp, sp in zip(teacher.parameters(), student.parameters()):
                tp.mul_(0.999).add_(sp, alpha=0.001)
        if it % 50 == 0:
            print(it, src_loss.item(), mix_loss.item())


if __name__ == "__main__":
    train()
