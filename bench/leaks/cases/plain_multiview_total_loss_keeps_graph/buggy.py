"""Multi-view 3D shape classifier: the epoch loss is summed as a tensor, keeping every step's graph

Source: https://github.com/ajhamdi/MVTN/issues/2
Style: plain
Kind: loss accumulated across steps with its graph: `epoch_loss += loss` keeps every batch's multi-view graph alive until the epoch ends; the process is killed in the second epoch
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


class ViewPooledNet(nn.Module):
    def __init__(self, n_views=12, n_classes=40):
        super().__init__()
        self.n_views = n_views
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 32, 5, stride=2), nn.ReLU(),
            nn.Conv2d(32, 64, 5, stride=2), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.head = nn.Linear(64, n_classes)

    def forward(self, views):
        b, v = views.shape[:2]
        feats = self.backbone(views.flatten(0, 1)).view(b, v, -1)
        return self.head(feats.max(dim=1).values)


def run_epoch(net, loader, optimizer, device):
    net.train()
    epoch_loss = 0.0
    hits, seen = 0, 0
    for views, labels in loader:
        views, labels = views.to(device), labels.to(device)
        logits = net(views)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_loss += loss  # leak: LL101
        hits += (logits.argmax(1) == labels).sum().item()
        seen += labels.numel()
    return epoch_loss / len(loader), hits / max(seen, 1)


def main(train_set, epochs=100, lr=1e-3):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = ViewPooledNet().to(device)
    optimizer = torch.optim.AdamW(net.parameters(), lr=lr)
    loader = DataLoader(train_set, batch_size=8, shuffle=True, num_workers=4)
    for epoch in range(epochs):
        mean_loss, acc = run_epoch(net, loader, optimizer, device)
        print(f"epoch {epoch}: loss {float(mean_loss):.4f} acc {acc:.3f}")
        torch.save(net.state_dict(), "mvnet.pt")
