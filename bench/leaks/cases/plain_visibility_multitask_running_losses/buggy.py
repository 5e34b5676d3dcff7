"""Traffic-light visibility net sums its total, MSE and cross-entropy losses as tensors, in training and validation

Source: https://github.com/samuelyu2002/ImVisible/issues/2
Style: plain
Kind: loss accumulated across steps with the graph (three running sums in training, three in validation)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class LightNet(nn.Module):
    """Classifies the pedestrian light (red/green/countdown/none) and regresses the zebra-crossing endpoints."""

    def __init__(self, num_classes=5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.Conv2d(64, 128, 3, 2, 1), nn.BatchNorm2d(128), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.cls = nn.Linear(128, num_classes)
        self.points = nn.Linear(128, 4)

    def forward(self, x):
        h = self.features(x).flatten(1)
        return self.cls(h), self.points(h)


def criterion(logits, points, labels, targets, weight=0.5):
    mse = F.mse_loss(points, targets)
    cross_entropy = F.cross_entropy(logits, labels)
    return weight * mse + (1 - weight) * cross_entropy, mse, cross_entropy


def main(epochs=100, device="cuda" if torch.cuda.is_available() else "cpu"):
    train = TensorDataset(torch.rand(4000, 3, 192, 256), torch.randint(0, 5, (4000,)), torch.rand(4000, 4))
    valid = TensorDataset(torch.rand(800, 3, 192, 256), torch.randint(0, 5, (800,)), torch.rand(800, 4))
    train_loader = DataLoader(train, batch_size=32, shuffle=True)
    valid_loader = DataLoader(valid, batch_size=32)
    net = LightNet().to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=5e-5)
    for epoch in range(epochs):
        net.train()
        running_loss = running_loss_MSE = running_loss_cross_entropy = 0.0
        for images, labels, points in train_loader:
            images, labels, points = images.to(device), labels.to(device), points.to(device)
            optimizer.zero_grad()
            pred_logits, pred_points = net(images)
            loss, MSE, cross_entropy = criterion(pred_logits, pred_points, labels, points)
            loss.backward()
            optimizer.step()
            running_loss += loss  # leak: LL101
            running_loss_MSE += MSE  # leak: LL101
            running_loss_cross_entropy += cross_entropy  # leak: LL101
        net.eval()
        val_running_loss = val_mse_loss = val_ce_loss = 0.0
        with torch.no_grad():
            for images, labels, points in valid_loader:
                images, labels, points = images.to(device), labels.to(device), points.to(device)
                pred_logits, pred_points = net(images)
                loss, MSE, cross_entropy = criterion(pred_logits, pred_points, labels, points)
                val_running_loss += loss
                val_mse_loss += MSE
                val_ce_loss += cross_entropy
        n_train, n_val = len(train_loader), len(valid_loader)
        print(f"epoch {epoch}: train {float(running_loss) / n_train:.4f} "
              f"(mse {float(running_loss_MSE) / n_train:.4f}, ce {float(running_loss_cross_entropy) / n_train:.4f}) "
              f"val {float(val_running_loss) / n_val:.4f} (mse {float(val_mse_loss) / n_val:.4f}, ce {float(val_ce_loss) / n_val:.4f})")


if __name__ == "__main__":
    main()
