"""Flux ControlNet training loads a complete second pipeline from the hub at every validation step

Source: https://github.com/huggingface/diffusers/issues/9546
Style: diffusion
Kind: a pipeline (a second copy of the base model) built on every validation call and never released
"""
import gc

import torch
import torch.nn as nn
from accelerate import Accelerator
from diffusers import FluxControlNetModel, FluxControlNetPipeline
from torch.utils.data import DataLoader, TensorDataset

BASE = "black-forest-labs/FLUX.1-dev"


def log_validation(flux_controlnet, accelerator, step, image, prompt):
    pipeline = FluxControlNetPipeline.from_pretrained(
        BASE, controlnet=accelerator.unwrap_model(flux_controlnet), torch_dtype=torch.bfloat16)
    pipeline.to(accelerator.device)
    pipeline.set_progress_bar_config(disable=True)
    images = pipeline(prompt=prompt, control_image=image, num_inference_steps=28, guidance_scale=3.5).images
    for i, img in enumerate(images):
        img.save(f"validation_{step}_{i}.png")
    pipeline.controlnet = None
    del pipeline
    gc.collect()
    torch.cuda.empty_cache()
    return images


def main(max_train_steps=15_000, validation_steps=5):
    accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=4)
    flux_controlnet = FluxControlNetModel(num_layers=4, num_single_layers=0)
    optimizer = torch.optim.AdamW(flux_controlnet.parameters(), lr=1e-5)
    data = TensorDataset(torch.randn(1000, 4096, 64), torch.randn(1000, 4096, 64))
    loader = DataLoader(data, batch_size=1, shuffle=True)
    flux_controlnet, optimizer, loader = accelerator.prepare(flux_controlnet, optimizer, loader)
    control = torch.zeros(1, 3, 512, 512)
    global_step = 0
    while global_step < max_train_steps:
        for latents, cond in loader:
            with accelerator.accumulate(flux_controlnet):
                pred = flux_controlnet.controlnet_x_embedder(cond)
                loss = nn.functional.mse_loss(pred.float(), latents.float())
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                global_step += 1
                if accelerator.is_main_process and global_step % validation_steps == 0:
                    log_validation(flux_controlnet, accelerator, global_step, control, "texture, bark, tree")


if __name__ == "__main__":
    main()
