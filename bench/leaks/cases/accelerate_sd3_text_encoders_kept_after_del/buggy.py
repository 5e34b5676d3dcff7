"""SD3 DreamBooth: text encoders are "unloaded" after caching the prompt embeddings by deleting the lists that hold them

Source: https://github.com/huggingface/diffusers/issues/8511
Source: https://github.com/huggingface/diffusers/pull/8536
Style: accelerate
Kind: models meant to be freed stay referenced: del removes the lists, but text_encoder_one/two/three (and the tokenizers) still name the three encoders, so about 10 GB of VRAM stays allocated for the whole training run
"""
import gc

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from diffusers import FlowMatchEulerDiscreteScheduler, SD3Transformer2DModel
from transformers import CLIPTextModelWithProjection, CLIPTokenizer, T5EncoderModel, T5TokenizerFast

MODEL = "stabilityai/stable-diffusion-3-medium-diffusers"


def encode_prompt(text_encoders, tokenizers, prompt, device):
    clip_embeds, pooled = [], []
    for tokenizer, encoder in zip(tokenizers[:2], text_encoders[:2]):
        ids = tokenizer(prompt, padding="max_length", max_length=77, truncation=True, return_tensors="pt").input_ids
        out = encoder(ids.to(device), output_hidden_states=True)
        pooled.append(out[0])
        clip_embeds.append(out.hidden_states[-2])
    clip_embeds = torch.cat(clip_embeds, dim=-1)
    t5_ids = tokenizers[2](prompt, padding="max_length", max_length=256, truncation=True, return_tensors="pt").input_ids
    t5_embeds = text_encoders[2](t5_ids.to(device))[0]
    clip_embeds = F.pad(clip_embeds, (0, t5_embeds.shape[-1] - clip_embeds.shape[-1]))
    return torch.cat([clip_embeds, t5_embeds], dim=-2), torch.cat(pooled, dim=-1)


def main(instance_latents, instance_prompt="a photo of sks dog", max_train_steps=1000, lr=1e-5):
    accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=1)
    device, dtype = accelerator.device, torch.bfloat16

    tokenizer_one = CLIPTokenizer.from_pretrained(MODEL, subfolder="tokenizer")
    tokenizer_two = CLIPTokenizer.from_pretrained(MODEL, subfolder="tokenizer_2")
    tokenizer_three = T5TokenizerFast.from_pretrained(MODEL, subfolder="tokenizer_3")
    text_encoder_one = CLIPTextModelWithProjection.from_pretrained(MODEL, subfolder="text_encoder", torch_dtype=dtype).to(device)
    text_encoder_two = CLIPTextModelWithProjection.from_pretrained(MODEL, subfolder="text_encoder_2", torch_dtype=dtype).to(device)
    text_encoder_three = T5EncoderModel.from_pretrained(MODEL, subfolder="text_encoder_3", torch_dtype=dtype).to(device)
    transformer = SD3Transformer2DModel.from_pretrained(MODEL, subfolder="transformer")
    scheduler = FlowMatchEulerDiscreteScheduler.from_pretrained(MODEL, subfolder="scheduler")

    tokenizers = [tokenizer_one, tokenizer_two, tokenizer_three]
    text_encoders = [text_encoder_one, text_encoder_two, text_encoder_three]
    text_encoder_one.requires_grad_(False)
    text_encoder_two.requires_grad_(False)
    text_encoder_three.requires_grad_(False)

    # the prompt never changes: encode it once, then free the text encoders
    with torch.no_grad():
        prompt_embeds, pooled_embeds = encode_prompt(text_encoders, tokenizers, instance_prompt, device)
    del tokenizers, text_encoders  # leak: new:lingering-reference
    gc.collect()
    torch.cuda.empty_cache()

    transformer.enable_gradient_checkpointing()
    optimizer = torch.optim.AdamW(transformer.parameters(), lr=lr, weight_decay=1e-4)
    transformer, optimizer = accelerator.prepare(transformer, optimizer)
    sigmas_all = scheduler.sigmas.to(device)

    for step in range(max_train_steps):
        latents = instance_latents[torch.randint(0, len(instance_latents), (1,))].to(device, dtype)
        noise = torch.randn_like(latents)
        index = torch.randint(0, scheduler.config.num_train_timesteps, (1,))
        sigma = sigmas_all[index].view(-1, 1, 1, 1).to(dtype)
        noisy = (1.0 - sigma) * latents + sigma * noise
        with accelerator.accumulate(transformer):
            pred = transformer(hidden_states=noisy, timestep=scheduler.timesteps[index].to(device),
                               encoder_hidden_states=prompt_embeds, pooled_projections=pooled_embeds).sample
            loss = F.mse_loss(pred.float(), (noise - latents).float())
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        if step % 50 == 0:
            accelerator.print(step, loss.item(), torch.cuda.memory_allocated() / 2**30)
    accelerator.save_state("sd3-dreambooth")
