"""Federated learning client: each round trains locally, then validates the global and local weights with autograd on

Source: https://github.com/NVIDIA/NVFlare/pull/3071
Style: plain
Kind: evaluation forward records a graph nobody uses: the client's validation helper calls the model under model.eval() but without torch.no_grad(), so every validation batch of every round builds a training-size graph; GPU memory during validation is far above what evaluation needs
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


class SimpleCNN(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(128, 256, 3, padding=1), nn.BatchNorm2d(256), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(256, n_classes)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


class CifarClient:
    def __init__(self, site_name, data_root, device, local_epochs=2, lr=1e-2):
        self.site_name = site_name
        self.device = device
        self.local_epochs = local_epochs
        tf_train = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(),
                                       transforms.ToTensor()])
        self.train_loader = DataLoader(datasets.CIFAR10(data_root, train=True, transform=tf_train, download=True),
                                       batch_size=64, shuffle=True, num_workers=4)
        self.valid_loader = DataLoader(datasets.CIFAR10(data_root, train=False, transform=transforms.ToTensor()),
                                       batch_size=256, shuffle=False, num_workers=4)
        self.model = SimpleCNN().to(device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9)

    def local_train(self):
        self.model.train()
        for epoch in range(self.local_epochs):
            running = 0.0
            for i, (x, y) in enumerate(self.train_loader):
                x, y = x.to(self.device), y.to(self.device)
                loss = F.cross_entropy(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                running += loss.item()
                if i % 100 == 99:
                    print(f"[{self.site_name}] epoch {epoch} step {i + 1} loss {running / 100:.4f}")
                    running = 0.0

    def local_valid(self, model):
        model.eval()
        correct, total, loss_sum = 0, 0, 0.0
        with torch.no_grad():
            for x, y in self.valid_loader:
                x, y = x.to(self.device), y.to(self.device)
                logits = model(x)
                loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
                correct += (logits.argmax(1) == y).sum().item()
                total += y.numel()
        return {"val_acc": correct / total, "val_loss": loss_sum / total}

    def execute_round(self, global_weights, round_num):
        self.model.load_state_dict(global_weights)
        global_metrics = self.local_valid(self.model)
        print(f"[{self.site_name}] round {round_num} global model: {global_metrics}")
        self.local_train()
        local_metrics = self.local_valid(self.model)
        print(f"[{self.site_name}] round {round_num} local model: {local_metrics}")
        return copy.deepcopy(self.model.state_dict()), len(self.train_loader.dataset), local_metrics


def fed_avg(updates):
    total = sum(n for _, n, _ in updates)
    return {k: sum(w[k].float() * (n / total) for w, n, _ in updates).to(updates[0][0][k].dtype)
            for k in updates[0][0]}


if __name__ == "__main__":
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    clients = [CifarClient(f"site-{i}", f"/data/site-{i}", dev) for i in range(1, 3)]
    weights = SimpleCNN().state_dict()
    for rnd in range(50):
        weights = fed_avg([c.execute_round(weights, rnd) for c in clients])
