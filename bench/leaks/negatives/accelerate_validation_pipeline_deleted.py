"""log_validation builds a pipeline around the training ControlNet and deletes it before training resumes

Source: https://github.com/huggingface/diffusers/blob/main/examples/controlnet/train_controlnet.py
Style: accelerate
Kind: negative: a pipeline built on every validation call (released at the end of the call)
"""
import gc

import torch
from accelerate import Accelerator
from diffusers import ControlNetModel, StableDiffusionControlNetPipeline
from torch.utils.data import DataLoader, TensorDataset


def log_validation(controlnet, accelerator, step, base="runwayml/stable-diffusion-v1-5"):
    pipeline = StableDiffusionControlNetPipeline.from_pretrained(base, controlnet=accelerator.unwrap_model(controlnet), torch_dtype=torch.float16)
    pipeline = pipeline.to(accelerator.device)
    pipeline.set_progress_bar_config(disable=True)
    control = torch.zeros(1, 3, 512, 512)
    with torch.autocast("cuda"):
        image = pipeline("a bird on a branch", image=control, num_inference_steps=20).images[0]
    image.save(f"validation-{step}.png")
    del pipeline
    gc.collect()
    torch.cuda.empty_cache()


def main(max_train_steps=10_000, validation_steps=500):
    accelerator = Accelerator(mixed_precision="fp16")
    controlnet = ControlNetModel.from_pretrained("lllyasviel/sd-controlnet-canny")
    optimizer = torch.optim.AdamW(controlnet.parameters(), lr=1e-5)
    loader = DataLoader(TensorDataset(torch.randn(1000, 3, 64, 64)), batch_size=1)
    controlnet, optimizer, loader = accelerator.prepare(controlnet, optimizer, loader)
    step = 0
    while step < max_train_steps:
        for (cond,) in loader:
            loss = controlnet.controlnet_cond_embedding(cond).pow(2).mean()
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            if accelerator.is_main_process and step % validation_steps == 0:
                log_validation(controlnet, accelerator, step)


if __name__ == "__main__":
    main()
