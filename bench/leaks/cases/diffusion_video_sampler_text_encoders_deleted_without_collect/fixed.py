"""Text-to-video sampling for a trained LoRA: the text encoders are deleted before the DiT is loaded, but their VRAM is never released

Source: https://github.com/kohya-ss/musubi-tuner/pull/459
Style: diffusion
Kind: encoders meant to be freed that something still references: after encoding the prompts, `del` drops the script's names for the LLM and CLIP text encoders, but the transformers modules sit in reference cycles that only the garbage collector breaks; without `gc.collect()` their weights stay on the GPU while the video transformer and VAE are loaded, and sampling runs out of VRAM
"""
import argparse
import gc

import torch
from diffusers import AutoencoderKLHunyuanVideo, FlowMatchEulerDiscreteScheduler, HunyuanVideoTransformer3DModel
from diffusers.utils import export_to_video
from transformers import AutoTokenizer, CLIPTextModel, CLIPTokenizer, LlamaModel

DEVICE = "cuda"
DTYPE = torch.bfloat16


@torch.no_grad()
def encode_prompts(prompts, llm_path, clip_path):
    llm_tok = AutoTokenizer.from_pretrained(llm_path)
    llm = LlamaModel.from_pretrained(llm_path, torch_dtype=torch.float16).to(DEVICE)
    clip_tok = CLIPTokenizer.from_pretrained(clip_path)
    clip = CLIPTextModel.from_pretrained(clip_path, torch_dtype=torch.float16).to(DEVICE)
    embeds = []
    for prompt in prompts:
        ids = llm_tok(prompt, max_length=256, padding="max_length", truncation=True, return_tensors="pt").to(DEVICE)
        hidden = llm(**ids, output_hidden_states=True).hidden_states[-3]
        clip_ids = clip_tok(prompt, max_length=77, padding="max_length", truncation=True, return_tensors="pt").to(DEVICE)
        pooled = clip(**clip_ids).pooler_output
        embeds.append((hidden.cpu(), ids["attention_mask"].cpu(), pooled.cpu()))
    return embeds, (llm, clip)


@torch.no_grad()
def sample(transformer, vae, scheduler, embed, frames=61, height=544, width=960, steps=30, guidance=6.0, seed=0):
    hidden, mask, pooled = (t.to(DEVICE) for t in embed)
    gen = torch.Generator(DEVICE).manual_seed(seed)
    latents = torch.randn(1, 16, (frames - 1) // 4 + 1, height // 8, width // 8, generator=gen, device=DEVICE, dtype=DTYPE)
    scheduler.set_timesteps(steps, device=DEVICE)
    guidance_t = torch.tensor([guidance * 1000.0], device=DEVICE, dtype=DTYPE)
    for t in scheduler.timesteps:
        noise_pred = transformer(
            hidden_states=latents, timestep=t.expand(1), encoder_hidden_states=hidden.to(DTYPE),
            encoder_attention_mask=mask, pooled_projections=pooled.to(DTYPE), guidance=guidance_t,
        ).sample
        latents = scheduler.step(noise_pred, t, latents).prev_sample
    video = vae.decode(latents / vae.config.scaling_factor).sample
    return ((video[0].permute(1, 2, 3, 0).float().clamp(-1, 1) + 1) / 2).cpu().numpy()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dit", required=True)
    parser.add_argument("--vae", required=True)
    parser.add_argument("--llm", required=True)
    parser.add_argument("--clip", required=True)
    parser.add_argument("--lora", default=None)
    parser.add_argument("--prompts", nargs="+", required=True)
    args = parser.parse_args()

    embeds, (llm, clip) = encode_prompts(args.prompts, args.llm, args.clip)
    del llm, clip
    gc.collect()
    torch.cuda.empty_cache()

    transformer = HunyuanVideoTransformer3DModel.from_pretrained(args.dit, torch_dtype=DTYPE).to(DEVICE)
    if args.lora:
        transformer.load_lora_adapter(args.lora, adapter_name="finetuned")
    vae = AutoencoderKLHunyuanVideo.from_pretrained(args.vae, torch_dtype=DTYPE).to(DEVICE)
    vae.enable_tiling()
    scheduler = FlowMatchEulerDiscreteScheduler(shift=7.0)
    for i, embed in enumerate(embeds):
        frames = sample(transformer, vae, scheduler, embed, seed=i)
        export_to_video(list(frames), f"sample_{i:02d}.mp4", fps=24)


if __name__ == "__main__":
    main()
