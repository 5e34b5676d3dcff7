"""Per-key epoch losses of a scene completion network are summed as tensors

Source: https://github.com/jokester-zzz/SSA-SC/issues/2
Style: plain
Kind: dict of loss tensors accumulated across steps with the graph
Runnable from: bench/leaks/cases/plain_semantic_completion_loss_dict
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class CompletionNet(nn.Module):
    def __init__(self, classes=20):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv3d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv3d(8, 16, 3, 2, 1), nn.ReLU())
        self.seg_head = nn.ConvTranspose3d(16, classes, 4, 2, 1)
        self.occ_head = nn.ConvTranspose3d(16, 1, 4, 2, 1)

    def forward(self, voxels):
        h = self.enc(voxels)
        return self.seg_head(h), self.occ_head(h)


def compute_loss(seg, occ, target):
    return {
        "semantic": F.cross_entropy(seg, target, ignore_index=255),
        "occupancy": F.binary_cross_entropy_with_logits(occ.squeeze(1), (target > 0).float()),
    }


def main(epochs=1):
    torch.manual_seed(0)
    voxels = torch.rand(200, 1, 8, 8, 4)
    labels = torch.randint(0, 20, (200, 8, 8, 4))
    loader = DataLoader(TensorDataset(voxels, labels), batch_size=2, shuffle=True)
    model = CompletionNet()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        epoch_loss = {"total": 0.0, "semantic": 0.0, "occupancy": 0.0}
        for vox, target in loader:
            seg, occ = model(vox)
            loss = compute_loss(seg, occ, target)
            total = loss["semantic"] + 0.5 * loss["occupancy"]
            optimizer.zero_grad()
            total.backward()
            optimizer.step()
            epoch_loss["total"] += total.item()
            for key in loss:
                epoch_loss[key] += loss[key].item()
        print(epoch, {k: float(v) / len(loader) for k, v in epoch_loss.items()})


if __name__ == "__main__":
    main()
