"""validate() has no no_grad of its own: its only caller runs it inside torch.no_grad()

Source: https://github.com/huggingface/pytorch-image-models/issues/80
Style: plain
Kind: negative: evaluation forward without no_grad in the function, guarded by the caller in the same file
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def validate(model, loader, criterion, device):
    model.eval()
    total_loss, correct, seen = 0.0, 0, 0
    for images, targets in loader:
        images, targets = images.to(device), targets.to(device)
        output = model(images)
        total_loss += criterion(output, targets).item() * images.shape[0]
        correct += (output.argmax(1) == targets).sum().item()
        seen += images.shape[0]
    return {"loss": total_loss / seen, "top1": correct / seen}


def train_one_epoch(model, loader, criterion, optimizer, device):
    model.train()
    for images, targets in loader:
        loss = criterion(model(images.to(device)), targets.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(epochs=100):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 1000)).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    train_loader = DataLoader(TensorDataset(torch.randn(5000, 3, 224, 224), torch.randint(0, 1000, (5000,))), batch_size=64)
    val_loader = DataLoader(TensorDataset(torch.randn(1000, 3, 224, 224), torch.randint(0, 1000, (1000,))), batch_size=256)
    for epoch in range(epochs):
        train_one_epoch(model, train_loader, criterion, optimizer, device)
        with torch.no_grad():
            metrics = validate(model, val_loader, criterion, device)
        print(epoch, metrics)


if __name__ == "__main__":
    main()
