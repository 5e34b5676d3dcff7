"""A video-avatar training loop on accelerate keeps adding the batch loss tensor to total_loss

Source: https://github.com/johndpope/OmniHuman-1-hack/issues/15
Style: accelerate
Kind: loss accumulated across gradient-accumulation steps with the graph
"""
import torch
import torch.nn as nn
import wandb
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


class DenoiserDiT(nn.Module):
    def __init__(self, dim=512, depth=8):
        super().__init__()
        layer = nn.TransformerEncoderLayer(dim, 8, 4 * dim, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth)
        self.in_proj = nn.Linear(64, dim)
        self.out_proj = nn.Linear(dim, 64)

    def forward(self, noisy_latents, t):
        h = self.in_proj(noisy_latents) + t[:, None, None]
        return self.out_proj(self.blocks(h))


def flow_matching_loss(model, latents):
    t = torch.rand(latents.shape[0], device=latents.device)
    noise = torch.randn_like(latents)
    noisy = (1 - t[:, None, None]) * latents + t[:, None, None] * noise
    return nn.functional.mse_loss(model(noisy, t), noise - latents)


def main(epochs=10, accumulation=8, use_wandb=True):
    accelerator = Accelerator(gradient_accumulation_steps=accumulation, mixed_precision="bf16")
    model = DenoiserDiT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loader = DataLoader(TensorDataset(torch.randn(4000, 256, 64)), batch_size=2, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    global_step = 0
    for epoch in range(epochs):
        total_loss, samples_processed = 0.0, 0
        for (latents,) in loader:
            with accelerator.accumulate(model):
                batch_loss = flow_matching_loss(model, latents)
                accelerator.backward(batch_loss)
                optimizer.step()
                optimizer.zero_grad()
            total_loss += batch_loss  # leak: LL101
            samples_processed += latents.shape[0]
            if accelerator.sync_gradients:
                global_step += 1
                if use_wandb and accelerator.is_main_process and global_step % 5 == 0:
                    wandb.log({"step": global_step, "avg_loss": float(total_loss) / samples_processed})


if __name__ == "__main__":
    main()
