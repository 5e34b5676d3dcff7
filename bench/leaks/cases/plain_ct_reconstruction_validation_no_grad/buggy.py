"""Validation loss of a CT reconstruction network is computed with gradients enabled

Source: https://github.com/CambridgeCIA/LION/issues/115
Style: plain
Kind: evaluation forward records a graph nobody uses
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class FBPConvNet(nn.Module):
    """U-Net style post-processing of filtered back-projection images."""

    def __init__(self, ch=64):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(), nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.mid = nn.Sequential(nn.Conv2d(ch, 2 * ch, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(2 * ch, ch, 2, 2)
        self.out = nn.Conv2d(2 * ch, 1, 1)

    def forward(self, x):
        skip = self.down(x)
        y = self.up(self.mid(self.pool(skip)))
        return x + self.out(torch.cat([y, skip], 1))


def loaders():
    train = TensorDataset(torch.randn(512, 1, 128, 128), torch.randn(512, 1, 128, 128))
    val = TensorDataset(torch.randn(128, 1, 128, 128), torch.randn(128, 1, 128, 128))
    return DataLoader(train, batch_size=8, shuffle=True), DataLoader(val, batch_size=8)


def main(epochs=100):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = FBPConvNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    loss_fcn = nn.MSELoss()
    train_loader, validation_loader = loaders()
    best = float("inf")
    for epoch in range(epochs):
        model.train()
        for fbp, target in train_loader:
            optimizer.zero_grad()
            loss = loss_fcn(model(fbp.to(device)), target.to(device))
            loss.backward()
            optimizer.step()
        model.eval()
        validation_loss = 0.0
        for fbp, target in validation_loader:
            reconstruction = model(fbp.to(device))  # leak: LL201
            validation_loss += loss_fcn(reconstruction, target.to(device)).item()
        validation_loss /= len(validation_loader)
        if validation_loss < best:
            best = validation_loss
            torch.save(model.state_dict(), "fbpconvnet_best.pt")
        print(f"epoch {epoch}: validation {validation_loss:.5f}")


if __name__ == "__main__":
    main()
