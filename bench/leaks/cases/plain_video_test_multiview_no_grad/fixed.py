"""Multi-view video testing runs the network with gradients enabled

Source: https://github.com/facebookresearch/SlowFast/issues/109
Style: plain
Kind: evaluation forward records a graph nobody uses
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class ClipDataset(Dataset):
    """Every video yields num_views spatial/temporal crops."""

    def __init__(self, num_videos=400, num_views=30, frames=8, size=112):
        self.num_videos, self.num_views, self.frames, self.size = num_videos, num_views, frames, size

    def __len__(self):
        return self.num_videos * self.num_views

    def __getitem__(self, idx):
        clip = torch.randn(3, self.frames, self.size, self.size)
        return clip, idx % 400, idx // self.num_views


class TinySlowFast(nn.Module):
    def __init__(self, classes=400):
        super().__init__()
        self.stem = nn.Conv3d(3, 64, (1, 7, 7), (1, 2, 2), (0, 3, 3))
        self.block = nn.Sequential(nn.Conv3d(64, 128, 3, 2, 1), nn.ReLU(), nn.Conv3d(128, 256, 3, 2, 1), nn.ReLU())
        self.head = nn.Linear(256, classes)

    def forward(self, clip):
        return self.head(self.block(self.stem(clip)).mean(dim=(2, 3, 4)))


class MultiViewMeter:
    def __init__(self, num_videos, classes):
        self.preds = torch.zeros(num_videos, classes)
        self.labels = torch.zeros(num_videos, dtype=torch.long)

    def update(self, preds, labels, video_idx):
        self.preds.index_add_(0, video_idx, preds.softmax(-1).cpu())
        self.labels[video_idx] = labels

    def top1(self):
        return (self.preds.argmax(1) == self.labels).float().mean().item()


@torch.no_grad()
def perform_test(loader, model, meter, device):
    model.eval()
    for clips, labels, video_idx in loader:
        preds = model(clips.to(device))
        meter.update(preds.detach(), labels, video_idx)
    return meter.top1()


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = TinySlowFast().to(device)
    loader = DataLoader(ClipDataset(), batch_size=16, num_workers=4)
    print("top-1:", perform_test(loader, model, MultiViewMeter(400, 400), device))
