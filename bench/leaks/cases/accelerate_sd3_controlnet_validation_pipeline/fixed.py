"""log_validation loads a fresh pipeline from the hub every validation and never frees it

Source: https://github.com/huggingface/diffusers/issues/11225
Style: accelerate
Kind: a pipeline (a second copy of the model) built on every validation call and kept
"""
import torch
import torch.nn as nn
from accelerate import Accelerator
from diffusers import SD3ControlNetModel, StableDiffusion3ControlNetPipeline
from torch.utils.data import DataLoader, TensorDataset

BASE = "stabilityai/stable-diffusion-3-medium-diffusers"


def log_validation(controlnet, accelerator, step, prompt="a bird on a branch"):
    pipeline = StableDiffusion3ControlNetPipeline.from_pretrained(
        BASE, controlnet=accelerator.unwrap_model(controlnet), torch_dtype=torch.float16)
    pipeline.to(accelerator.device)
    control = torch.zeros(1, 3, 512, 512, device=accelerator.device, dtype=torch.float16)
    with torch.autocast("cuda"):
        image = pipeline(prompt, control_image=control, num_inference_steps=20).images[0]
    image.save(f"validation-{step}.png")
    del pipeline
    torch.cuda.empty_cache()


def main(max_train_steps=15_000, validation_steps=500):
    accelerator = Accelerator(mixed_precision="fp16", gradient_accumulation_steps=4)
    controlnet = SD3ControlNetModel.from_pretrained("InstantX/SD3-Controlnet-Canny")
    optimizer = torch.optim.AdamW(controlnet.parameters(), lr=1e-5)
    loader = DataLoader(TensorDataset(torch.randn(2000, 16, 64, 64), torch.randn(2000, 16, 64, 64)), batch_size=1, shuffle=True)
    controlnet, optimizer, loader = accelerator.prepare(controlnet, optimizer, loader)
    global_step = 0
    while global_step < max_train_steps:
        for latents, cond in loader:
            with accelerator.accumulate(controlnet):
                residual = controlnet.pos_embed_input(cond) if hasattr(controlnet, "pos_embed_input") else cond
                loss = nn.functional.mse_loss(residual.float(), latents.float())
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                global_step += 1
                if accelerator.is_main_process and global_step % validation_steps == 0:
                    log_validation(controlnet, accelerator, global_step)


if __name__ == "__main__":
    main()
