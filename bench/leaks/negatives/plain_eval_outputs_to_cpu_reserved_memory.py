"""An evaluation loop moves each batch's outputs to the CPU; nvidia-smi still shows the caching allocator's reserved memory

Source: https://github.com/pytorch/pytorch/issues/37250
Style: plain
Kind: negative: predictions collected over a whole evaluation (moved to the CPU batch by batch, under no_grad; reserved != allocated is the caching allocator)
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Segmenter(nn.Module):
    def __init__(self, classes=19):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(64, classes, 1))

    def forward(self, x):
        return self.net(x)


def report(tag):
    if torch.cuda.is_available():
        print(f"{tag}: allocated {torch.cuda.memory_allocated() / 2**20:.0f} MiB, "
              f"reserved {torch.cuda.memory_reserved() / 2**20:.0f} MiB")


def evaluate(model, loader, device):
    model.eval()
    predictions, labels = [], []
    with torch.no_grad():
        for images, masks in loader:
            logits = model(images.to(device))
            predictions.append(logits.argmax(1).to("cpu", torch.uint8))
            labels.append(masks)
    report("after evaluation")
    predictions, labels = torch.cat(predictions), torch.cat(labels)
    valid = labels != 255
    return (predictions[valid] == labels[valid]).float().mean().item()


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = Segmenter().to(device)
    data = TensorDataset(torch.rand(500, 3, 512, 1024), torch.randint(0, 19, (500, 512, 1024), dtype=torch.uint8))
    loader = DataLoader(data, batch_size=4)
    for epoch in range(10):
        print("pixel accuracy", evaluate(model, loader, device))
        report(f"epoch {epoch}")
