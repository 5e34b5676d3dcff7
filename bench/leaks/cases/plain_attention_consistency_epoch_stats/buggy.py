"""Epoch statistics of a facial-expression trainer sum the loss and the correct count with their graphs

Source: https://github.com/zyh-uaiaaaa/Erasing-Attention-Consistency/issues/11
Style: plain
Kind: loss and correct count accumulated across steps with the graph
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class ResNetLike(nn.Module):
    def __init__(self, classes=7):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 64, 3, 2, 1), nn.ReLU(), nn.Conv2d(64, 128, 3, 2, 1), nn.ReLU())
        self.fc = nn.Linear(128, classes)

    def forward(self, x):
        feat = self.features(x)
        return self.fc(feat.mean(dim=(2, 3))), feat


def attention_consistency(feat, feat_flip):
    return F.mse_loss(feat.mean(1), torch.flip(feat_flip, dims=[3]).mean(1))


def train(model, loader, optimizer, device):
    running_loss = 0.0
    correct_sum = 0
    iter_cnt = 0
    model.train()
    for imgs, labels in loader:
        imgs, labels = imgs.to(device), labels.to(device)
        flipped = torch.flip(imgs, dims=[3])
        output, feat = model(imgs)
        _, feat_flip = model(flipped)
        loss = F.cross_entropy(output, labels) + 5.0 * attention_consistency(feat, feat_flip)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        iter_cnt += 1
        running_loss += loss  # leak: LL101
        _, predicts = torch.max(output, 1)
        correct_num = torch.eq(predicts, labels).sum()
        correct_sum += correct_num
    return running_loss / iter_cnt, correct_sum.float() / len(loader.dataset)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    data = TensorDataset(torch.randn(3000, 3, 112, 112), torch.randint(0, 7, (3000,)))
    loader = DataLoader(data, batch_size=64, shuffle=True)
    model = ResNetLike().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(60):
        loss, acc = train(model, loader, optimizer, device)
        print(f"epoch {epoch}: loss {float(loss):.3f} acc {float(acc):.4f}")
