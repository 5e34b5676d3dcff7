"""Stable Diffusion LoRA fine-tuning that builds a sampling pipeline for every validation round and releases it afterwards

Source: https://github.com/huggingface/diffusers/pull/4505
Style: diffusion
Kind: negative: resembles a pipeline built on every call of a function that runs many times (model-per-call) and generated images kept across validations; the pipeline reuses the training UNet, VAE and text encoder (no new weights), images leave as numpy arrays for the logger, and `del pipeline` with `torch.cuda.empty_cache()` ends every round, as in the diffusers training scripts
"""
import numpy as np
import torch
import torch.nn.functional as F
from diffusers import DDPMScheduler, StableDiffusionPipeline
from peft import LoraConfig
from torch.utils.tensorboard import SummaryWriter

BASE = "runwayml/stable-diffusion-v1-5"


def log_validation(unet, vae, text_encoder, tokenizer, prompt, writer, step, n_images=4, seed=0):
    pipeline = StableDiffusionPipeline.from_pretrained(
        BASE, unet=unet, vae=vae, text_encoder=text_encoder, tokenizer=tokenizer,
        safety_checker=None, torch_dtype=torch.float16,
    ).to("cuda")
    pipeline.set_progress_bar_config(disable=True)
    generator = torch.Generator("cuda").manual_seed(seed)
    images = [pipeline(prompt, num_inference_steps=30, generator=generator).images[0] for _ in range(n_images)]
    stacked = np.stack([np.asarray(img) for img in images])
    writer.add_images("validation", stacked, step, dataformats="NHWC")
    del pipeline
    torch.cuda.empty_cache()


def train(loader, prompt, steps=15000, validate_every=500, lr=1e-4):
    pipe = StableDiffusionPipeline.from_pretrained(BASE, torch_dtype=torch.float32)
    unet, vae, text_encoder, tokenizer = pipe.unet, pipe.vae, pipe.text_encoder, pipe.tokenizer
    noise_scheduler = DDPMScheduler.from_pretrained(BASE, subfolder="scheduler")
    del pipe
    vae.requires_grad_(False)
    text_encoder.requires_grad_(False)
    unet.requires_grad_(False)
    unet.add_adapter(LoraConfig(r=8, lora_alpha=8, target_modules=["to_k", "to_q", "to_v", "to_out.0"]))
    unet.to("cuda")
    vae.to("cuda", dtype=torch.float16)
    text_encoder.to("cuda", dtype=torch.float16)
    params = [p for p in unet.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=lr)
    writer = SummaryWriter("logs/sd_lora")
    step = 0
    while step < steps:
        for pixel_values, input_ids in loader:
            with torch.no_grad():
                latents = vae.encode(pixel_values.to("cuda", torch.float16)).latent_dist.sample()
                latents = (latents * vae.config.scaling_factor).float()
                encoder_states = text_encoder(input_ids.to("cuda"))[0].float()
            noise = torch.randn_like(latents)
            t = torch.randint(0, noise_scheduler.config.num_train_timesteps, (latents.size(0),), device="cuda")
            noisy = noise_scheduler.add_noise(latents, noise, t)
            pred = unet(noisy, t, encoder_states).sample
            loss = F.mse_loss(pred, noise)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
            writer.add_scalar("train/loss", loss.item(), step)
            if step % validate_every == 0:
                unet.eval()
                log_validation(unet, vae, text_encoder, tokenizer, prompt, writer, step)
                unet.train()
            if step >= steps:
                break
    writer.close()
    unet.save_pretrained("sd-lora-out")
