"""Diffusion UNet training with post-hoc EMA: every checkpoint deep-copies each EMA model on the GPU to cast it

Source: https://github.com/lucidrains/ema-pytorch/issues/35
Style: diffusion
Kind: a model built on every call of a function that runs many times: `checkpoint()` runs every few hundred steps and makes a full deepcopy of every EMA model on the GPU to convert its dtype; GPU memory grows checkpoint after checkpoint until OOM
"""
import copy
import os

import torch
import torch.nn.functional as F
from diffusers import DDPMScheduler, UNet2DModel
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


class PostHocEMA:
    """Keeps a few EMA copies with different decay profiles and snapshots them periodically."""

    def __init__(self, model, sigma_rels=(0.05, 0.28), folder="ema_snapshots", dtype=torch.float16):
        self.ema_models = [copy.deepcopy(model).eval().requires_grad_(False) for _ in sigma_rels]
        self.gammas = [self._gamma(s) for s in sigma_rels]
        self.folder = folder
        self.checkpoint_dtype = dtype
        self.step = 0
        os.makedirs(folder, exist_ok=True)

    @staticmethod
    def _gamma(sigma_rel):
        t = sigma_rel ** -2
        return float(((7 + t) / 3) ** 0.5 - 3)

    @torch.no_grad()
    def update(self, model):
        self.step += 1
        for ema_model, gamma in zip(self.ema_models, self.gammas):
            beta = (1.0 - 1.0 / self.step) ** (gamma + 1)
            for p_ema, p in zip(ema_model.parameters(), model.parameters()):
                p_ema.lerp_(p, 1.0 - beta)

    def checkpoint(self):
        for ind, ema_model in enumerate(self.ema_models):
            path = os.path.join(self.folder, f"{ind}.{self.step}.pt")
            pkg = copy.deepcopy(ema_model).to(self.checkpoint_dtype).state_dict()  # leak: new:model-per-call
            torch.save(pkg, path)


def main(epochs=400, checkpoint_every=500):
    device = "cuda"
    data = datasets.ImageFolder(
        "data/celeba64",
        transform=transforms.Compose([transforms.Resize(64), transforms.CenterCrop(64), transforms.ToTensor(),
                                      transforms.Normalize([0.5] * 3, [0.5] * 3)]),
    )
    loader = DataLoader(data, batch_size=64, shuffle=True, num_workers=8, drop_last=True)
    unet = UNet2DModel(sample_size=64, in_channels=3, out_channels=3,
                       block_out_channels=(128, 256, 256, 512), layers_per_block=2).to(device)
    noise_scheduler = DDPMScheduler(num_train_timesteps=1000)
    optimizer = torch.optim.AdamW(unet.parameters(), lr=2e-4)
    ema = PostHocEMA(unet)

    global_step = 0
    for epoch in range(epochs):
        for images, _ in loader:
            images = images.to(device)
            noise = torch.randn_like(images)
            t = torch.randint(0, noise_scheduler.config.num_train_timesteps, (images.shape[0],), device=device)
            noisy = noise_scheduler.add_noise(images, noise, t)
            loss = F.mse_loss(unet(noisy, t).sample, noise)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            ema.update(unet)
            global_step += 1
            if global_step % checkpoint_every == 0:
                ema.checkpoint()
                print(f"step {global_step} loss {loss.item():.4f} "
                      f"allocated {torch.cuda.memory_allocated() / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
