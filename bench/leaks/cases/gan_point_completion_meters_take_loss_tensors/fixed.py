"""Point-cloud completion GAN: the loss meters are updated with loss tensors instead of their values

Source: https://github.com/microsoft/SpareNet/issues/12
Style: gan
Kind: graph kept across steps through a meter's update() (the meters sum graph-attached losses for visualization)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class AverageMeter:
    def __init__(self, items):
        self.items = items
        self.reset()

    def reset(self):
        self._val = [0] * len(self.items)
        self._sum = [0] * len(self.items)
        self._count = [0] * len(self.items)

    def update(self, values):
        for i, v in enumerate(values):
            self._val[i] = v
            self._sum[i] += v
            self._count[i] += 1

    def avg(self, idx):
        return self._sum[idx] / max(self._count[idx], 1)


def chamfer(a, b):
    d = torch.cdist(a, b)
    return d.min(2)[0].mean() + d.min(1)[0].mean()


class Completion(nn.Module):
    def __init__(self, n_out=2048):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv1d(3, 128, 1), nn.ReLU(), nn.Conv1d(128, 512, 1))
        self.coarse = nn.Linear(512, 512 * 3)
        self.refine = nn.Sequential(nn.Linear(512 + 3, 256), nn.ReLU(), nn.Linear(256, 3 * 4))
        self.n_out = n_out

    def forward(self, partial):
        g = self.encoder(partial.transpose(1, 2)).max(-1)[0]
        coarse = self.coarse(g).view(-1, 512, 3)
        feat = torch.cat([g.unsqueeze(1).expand(-1, 512, -1), coarse], -1)
        fine = (coarse.unsqueeze(2) + self.refine(feat).view(-1, 512, 4, 3)).reshape(-1, self.n_out, 3)
        return coarse, fine


class PointDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(3, 64, 1), nn.LeakyReLU(0.2), nn.Conv1d(64, 256, 1))
        self.head = nn.Linear(256, 1)

    def forward(self, pts):
        return self.head(self.net(pts.transpose(1, 2)).max(-1)[0])


def train(epochs=150, device="cuda" if torch.cuda.is_available() else "cpu"):
    data = TensorDataset(torch.rand(8000, 2048, 3), torch.rand(8000, 2048, 3))
    loader = DataLoader(data, batch_size=16, shuffle=True)
    net_g, net_d = Completion().to(device), PointDiscriminator().to(device)
    opt_g = torch.optim.Adam(net_g.parameters(), lr=1e-4)
    opt_d = torch.optim.Adam(net_d.parameters(), lr=1e-4)
    for epoch in range(epochs):
        train_losses = AverageMeter(["CoarseLoss", "RefineLoss", "GenLoss"])
        dis_losses = AverageMeter(["DisLoss"])
        for partial, gt in loader:
            partial, gt = partial.to(device), gt.to(device)
            coarse, fine = net_g(partial)
            d_loss = F.softplus(net_d(fine.detach())).mean() + F.softplus(-net_d(gt)).mean()
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()
            coarse_loss, refine_loss = chamfer(coarse, gt), chamfer(fine, gt)
            gen_loss = F.softplus(-net_d(fine)).mean()
            total = coarse_loss + refine_loss + 0.1 * gen_loss
            opt_g.zero_grad()
            total.backward()
            opt_g.step()
            train_losses.update([coarse_loss.item() * 1000, refine_loss.item() * 1000, gen_loss.item()])
            dis_losses.update([d_loss.item()])
        print(f"epoch {epoch}: coarse {float(train_losses.avg(0)):.3f} refine {float(train_losses.avg(1)):.3f} "
              f"gen {float(train_losses.avg(2)):.3f} dis {float(dis_losses.avg(0)):.3f}")


if __name__ == "__main__":
    train()
