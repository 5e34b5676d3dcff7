"""A self-supervised depth trainer appends every batch's output dict, loss included, for the epoch end

Source: https://github.com/TRI-ML/packnet-sfm/pull/51
Source: https://github.com/TRI-ML/packnet-sfm/issues/47
Style: plain
Kind: graph kept across steps in the per-epoch outputs list
Runnable from: bench/leaks/cases/plain_depth_trainer_outputs_list
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1), nn.Softplus())

    def forward(self, rgb):
        return self.net(rgb)


class SelfSupModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.depth_net = DepthNet()

    def forward(self, batch):
        depth = self.depth_net(batch["rgb"])
        warped = batch["rgb_context"] * (1.0 / (depth + 1e-3)).clamp(max=5.0)
        photometric = F.l1_loss(warped, batch["rgb"])
        smoothness = (depth[..., 1:] - depth[..., :-1]).abs().mean()
        return {"loss": photometric + 1e-3 * smoothness, "metrics": {"photo": photometric.detach()}}


class HorovodTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def train(self, dataloader, epoch):
        self.model.train()
        outputs = []
        for i, batch in enumerate(dataloader):
            self.optimizer.zero_grad()
            output = self.model(batch)
            output["loss"].backward()
            self.optimizer.step()
            outputs.append(output)  # leak: LL102
        return self.training_epoch_end(outputs, epoch)

    def training_epoch_end(self, outputs, epoch):
        avg = torch.stack([o["loss"] for o in outputs]).mean().item()
        print(f"epoch {epoch}: average loss {avg:.4f}")
        return avg


def synthetic_batches(n=100):
    return [{"rgb": torch.rand(2, 3, 24, 32), "rgb_context": torch.rand(2, 3, 24, 32)} for _ in range(n)]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = SelfSupModel()
    trainer = HorovodTrainer(model, torch.optim.Adam(model.parameters(), lr=2e-4))
    data = synthetic_batches()
    for epoch in range(1):
        trainer.train(data, epoch)
