"""DreamBooth training re-caches latents every epoch and re-prepares unet, optimizer and dataloader together

Source: https://github.com/d8ahazard/sd_dreambooth_extension/pull/598
Style: accelerate
Kind: accelerator.prepare() on the model and optimizer once per epoch: the accelerator keeps a reference to every wrapped copy (about 4 MB of VRAM per epoch)
"""
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from diffusers import AutoencoderKL, DDPMScheduler, UNet2DConditionModel
from torch.utils.data import DataLoader, Dataset


class InstanceImages(Dataset):
    def __init__(self, n=20, size=512):
        self.images = [torch.rand(3, size, size) * 2 - 1 for _ in range(n)]
        self.prompt_embeds = torch.randn(77, 768)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return {"pixel_values": self.images[i], "encoder_hidden_states": self.prompt_embeds}


class LatentsDataset(Dataset):
    def __init__(self, latents, embeds):
        self.latents, self.embeds = latents, embeds

    def __len__(self):
        return len(self.latents)

    def __getitem__(self, i):
        return self.latents[i], self.embeds[i]


@torch.no_grad()
def cache_latents(vae, dataset, device):
    latents, embeds = [], []
    for item in DataLoader(dataset, batch_size=1):
        latents.append(vae.encode(item["pixel_values"].to(device, vae.dtype)).latent_dist.sample()[0] * 0.18215)
        embeds.append(item["encoder_hidden_states"][0].to(device))
    return LatentsDataset(latents, embeds)


def main(model_path="runwayml/stable-diffusion-v1-5", epochs=400):
    accelerator = Accelerator(gradient_accumulation_steps=2, mixed_precision="fp16")
    unet = UNet2DConditionModel.from_pretrained(model_path, subfolder="unet")
    vae = AutoencoderKL.from_pretrained(model_path, subfolder="vae").to(accelerator.device, torch.float16)
    scheduler = DDPMScheduler.from_pretrained(model_path, subfolder="scheduler")
    optimizer = torch.optim.AdamW(unet.parameters(), lr=2e-6)
    unet, optimizer = accelerator.prepare(unet, optimizer)
    images = InstanceImages()
    for epoch in range(epochs):
        train_dataloader = DataLoader(cache_latents(vae, images, accelerator.device), batch_size=1, shuffle=True)
        unet.train()
        for latents, embeds in train_dataloader:
            with accelerator.accumulate(unet):
                noise = torch.randn_like(latents)
                t = torch.randint(0, scheduler.config.num_train_timesteps, (latents.shape[0],), device=latents.device)
                noisy = scheduler.add_noise(latents, noise, t)
                pred = unet(noisy, t, embeds).sample
                loss = F.mse_loss(pred.float(), noise.float())
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
        accelerator.print(f"epoch {epoch}: {torch.cuda.memory_allocated() / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
