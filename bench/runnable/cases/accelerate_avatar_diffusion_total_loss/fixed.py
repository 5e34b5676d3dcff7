"""A video-avatar training loop on accelerate keeps adding the batch loss tensor to total_loss

Source: https://github.com/johndpope/OmniHuman-1-hack/issues/15
Style: accelerate
Kind: loss accumulated across gradient-accumulation steps with the graph
Runnable from: bench/leaks/cases/accelerate_avatar_diffusion_total_loss
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class DenoiserDiT(nn.Module):
    def __init__(self, dim=64, depth=2):
        super().__init__()
        layer = nn.TransformerEncoderLayer(dim, 4, 2 * dim, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.in_proj = nn.Linear(16, dim)
        self.out_proj = nn.Linear(dim, 16)

    def forward(self, noisy_latents, t):
        h = self.in_proj(noisy_latents) + t[:, None, None]
        return self.out_proj(self.blocks(h))


def flow_matching_loss(model, latents):
    t = torch.rand(latents.shape[0])
    noise = torch.randn_like(latents)
    noisy = (1 - t[:, None, None]) * latents + t[:, None, None] * noise
    return nn.functional.mse_loss(model(noisy, t), noise - latents)


def main(epochs=1, accumulation=2):
    torch.manual_seed(0)
    model = DenoiserDiT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loader = DataLoader(TensorDataset(torch.randn(800, 16, 16)), batch_size=4, shuffle=True)
    global_step = 0
    for epoch in range(epochs):
        total_loss, samples_processed = 0.0, 0
        for index, (latents,) in enumerate(loader):
            batch_loss = flow_matching_loss(model, latents)
            (batch_loss / accumulation).backward()
            if (index + 1) % accumulation == 0:
                optimizer.step()
                optimizer.zero_grad()
                global_step += 1
            total_loss += batch_loss.item() * latents.shape[0]
            samples_processed += latents.shape[0]
            if global_step % 50 == 0:
                print({"step": global_step, "avg_loss": float(total_loss) / samples_processed})


if __name__ == "__main__":
    main()
