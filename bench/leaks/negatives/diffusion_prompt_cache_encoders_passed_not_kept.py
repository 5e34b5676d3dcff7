"""SD-style LoRA trainer: captions are encoded once into a disk cache, the text encoders are passed to the caching call only and then freed

Source: https://github.com/bghira/SimpleTuner/issues/457
Style: diffusion
Kind: negative: resembles text encoders deleted while another object still references them (lingering-reference); the embedding cache receives the encoders as arguments of `precompute()` only and stores nothing but file paths, so `del` of the last names and `gc.collect()` release the encoder weights before the UNet is loaded
"""
import gc
import os

import torch
import torch.nn.functional as F
from diffusers import DDPMScheduler, UNet2DConditionModel
from peft import LoraConfig
from transformers import CLIPTextModel, CLIPTokenizer

BASE = "runwayml/stable-diffusion-v1-5"
DEVICE = "cuda"


class CaptionEmbeddingCache:
    def __init__(self, cache_dir):
        self.cache_dir = cache_dir
        self.paths = []
        os.makedirs(cache_dir, exist_ok=True)

    @torch.no_grad()
    def precompute(self, captions, tokenizer, text_encoder):
        for idx, caption in enumerate(captions):
            path = os.path.join(self.cache_dir, f"{idx:07d}.pt")
            if not os.path.exists(path):
                ids = tokenizer(caption, padding="max_length", max_length=tokenizer.model_max_length,
                                truncation=True, return_tensors="pt").input_ids.to(DEVICE)
                torch.save(text_encoder(ids)[0].squeeze(0).cpu(), path)
            self.paths.append(path)

    def __getitem__(self, idx):
        return torch.load(self.paths[idx])

    def __len__(self):
        return len(self.paths)


def train(captions, latents_dir, steps=3000, lr=1e-4):
    tokenizer = CLIPTokenizer.from_pretrained(BASE, subfolder="tokenizer")
    text_encoder = CLIPTextModel.from_pretrained(BASE, subfolder="text_encoder", torch_dtype=torch.float16).to(DEVICE)
    cache = CaptionEmbeddingCache("cache/text")
    cache.precompute(captions, tokenizer, text_encoder)
    del text_encoder
    gc.collect()
    torch.cuda.empty_cache()

    unet = UNet2DConditionModel.from_pretrained(BASE, subfolder="unet", torch_dtype=torch.float16).to(DEVICE)
    unet.requires_grad_(False)
    unet.add_adapter(LoraConfig(r=8, lora_alpha=8, target_modules=["to_q", "to_k", "to_v", "to_out.0"]))
    params = [p for p in unet.parameters() if p.requires_grad]
    for p in params:
        p.data = p.data.float()
    optimizer = torch.optim.AdamW(params, lr=lr)
    noise_scheduler = DDPMScheduler.from_pretrained(BASE, subfolder="scheduler")

    for step in range(steps):
        idx = step % len(cache)
        cond = cache[idx].unsqueeze(0).to(DEVICE, torch.float16)
        latents = torch.load(os.path.join(latents_dir, f"{idx:07d}.pt")).to(DEVICE, torch.float16) * 0.18215
        noise = torch.randn_like(latents)
        t = torch.randint(0, noise_scheduler.config.num_train_timesteps, (latents.shape[0],), device=DEVICE)
        pred = unet(noise_scheduler.add_noise(latents, noise, t), t, encoder_hidden_states=cond).sample
        loss = F.mse_loss(pred.float(), noise.float())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.4f} allocated {torch.cuda.memory_allocated() / 2**30:.2f} GiB")
    unet.save_pretrained("sd15-lora-out")


if __name__ == "__main__":
    with open("captions.txt") as fh:
        train([line.strip() for line in fh if line.strip()], "cache/latents")
