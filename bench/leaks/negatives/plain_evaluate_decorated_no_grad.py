"""The evaluation function is decorated with @torch.no_grad(), so its forwards record nothing

Source: https://pytorch.org/docs/stable/generated/torch.no_grad.html
Style: plain
Kind: negative: evaluation forward and outputs collected in a list, under a no_grad decorator
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    all_probs, all_labels = [], []
    for x, y in loader:
        probs = model(x.to(device)).softmax(-1)
        all_probs.append(probs.cpu())
        all_labels.append(y)
    probs, labels = torch.cat(all_probs), torch.cat(all_labels)
    return (probs.argmax(1) == labels).float().mean().item()


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Sequential(nn.Linear(100, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    train = DataLoader(TensorDataset(torch.randn(20_000, 100), torch.randint(0, 10, (20_000,))), batch_size=128, shuffle=True)
    test = DataLoader(TensorDataset(torch.randn(5000, 100), torch.randint(0, 10, (5000,))), batch_size=512)
    for epoch in range(30):
        model.train()
        for x, y in train:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, evaluate(model, test, device))


if __name__ == "__main__":
    main()
