"""SD3-style LoRA trainer: text embeddings are cached up front, then the text encoders are deleted, but the cache object still references them

Source: https://github.com/bghira/SimpleTuner/issues/457
Style: diffusion
Kind: a model meant to be freed (`del text_encoder_*` after caching) that another object still references: the embedding cache keeps the list of text encoders on itself, so about 10 GB of encoder weights stay on the GPU for the whole LoRA run
"""
import gc
import os

import torch
import torch.nn.functional as F
from diffusers import AutoencoderKL, FlowMatchEulerDiscreteScheduler, SD3Transformer2DModel
from peft import LoraConfig
from transformers import CLIPTextModelWithProjection, CLIPTokenizer, T5EncoderModel, T5TokenizerFast

BASE = "stabilityai/stable-diffusion-3-medium-diffusers"
DEVICE = "cuda"


class PromptEmbeddingCache:
    """Encodes every caption once and keeps the result on disk."""

    def __init__(self, text_encoders, tokenizers, cache_dir):
        self.text_encoders = text_encoders
        self.tokenizers = tokenizers
        self.cache_dir = cache_dir
        os.makedirs(cache_dir, exist_ok=True)

    def _path(self, idx):
        return os.path.join(self.cache_dir, f"{idx:07d}.pt")

    @torch.no_grad()
    def encode(self, caption):
        clip_l, clip_g, t5 = self.text_encoders
        tok_l, tok_g, tok_t5 = self.tokenizers
        ids_l = tok_l(caption, padding="max_length", max_length=77, truncation=True, return_tensors="pt").input_ids
        ids_g = tok_g(caption, padding="max_length", max_length=77, truncation=True, return_tensors="pt").input_ids
        ids_t5 = tok_t5(caption, padding="max_length", max_length=256, truncation=True, return_tensors="pt").input_ids
        out_l = clip_l(ids_l.to(DEVICE), output_hidden_states=True)
        out_g = clip_g(ids_g.to(DEVICE), output_hidden_states=True)
        t5_embeds = t5(ids_t5.to(DEVICE))[0]
        clip_embeds = torch.cat([out_l.hidden_states[-2], out_g.hidden_states[-2]], dim=-1)
        clip_embeds = F.pad(clip_embeds, (0, t5_embeds.shape[-1] - clip_embeds.shape[-1]))
        prompt_embeds = torch.cat([clip_embeds, t5_embeds], dim=-2)
        pooled = torch.cat([out_l.text_embeds, out_g.text_embeds], dim=-1)
        return prompt_embeds.cpu(), pooled.cpu()

    def precompute(self, captions):
        for idx, caption in enumerate(captions):
            if not os.path.exists(self._path(idx)):
                torch.save(self.encode(caption), self._path(idx))
        # every caption is on disk: drop the encoders so that the caller's del frees them
        self.text_encoders = None

    def load(self, idx):
        return torch.load(self._path(idx))


def train(captions, latents_dir, steps=4000, lr=1e-4):
    tok_l = CLIPTokenizer.from_pretrained(BASE, subfolder="tokenizer")
    tok_g = CLIPTokenizer.from_pretrained(BASE, subfolder="tokenizer_2")
    tok_t5 = T5TokenizerFast.from_pretrained(BASE, subfolder="tokenizer_3")
    text_encoder_1 = CLIPTextModelWithProjection.from_pretrained(BASE, subfolder="text_encoder", torch_dtype=torch.float16).to(DEVICE)
    text_encoder_2 = CLIPTextModelWithProjection.from_pretrained(BASE, subfolder="text_encoder_2", torch_dtype=torch.float16).to(DEVICE)
    text_encoder_3 = T5EncoderModel.from_pretrained(BASE, subfolder="text_encoder_3", torch_dtype=torch.float16).to(DEVICE)

    cache = PromptEmbeddingCache([text_encoder_1, text_encoder_2, text_encoder_3], [tok_l, tok_g, tok_t5], "cache/text")
    cache.precompute(captions)

    # the encoders are not trained: free them before the transformer is loaded
    del text_encoder_1, text_encoder_2, text_encoder_3
    gc.collect()
    torch.cuda.empty_cache()
    print(f"after freeing text encoders: {torch.cuda.memory_allocated() / 2**30:.1f} GiB")

    transformer = SD3Transformer2DModel.from_pretrained(BASE, subfolder="transformer", torch_dtype=torch.float16).to(DEVICE)
    transformer.requires_grad_(False)
    transformer.enable_gradient_checkpointing()
    transformer.add_adapter(LoraConfig(r=16, lora_alpha=16, target_modules=["to_q", "to_k", "to_v", "to_out.0"]))
    params = [p for p in transformer.parameters() if p.requires_grad]
    for p in params:
        p.data = p.data.float()
    optimizer = torch.optim.AdamW(params, lr=lr)
    scheduler = FlowMatchEulerDiscreteScheduler.from_pretrained(BASE, subfolder="scheduler")
    vae_config = AutoencoderKL.load_config(BASE, subfolder="vae")

    for step in range(steps):
        idx = step % len(captions)
        prompt_embeds, pooled = (t.to(DEVICE) for t in cache.load(idx))
        latents = torch.load(os.path.join(latents_dir, f"{idx:07d}.pt")).to(DEVICE, torch.float16)
        latents = (latents - vae_config["shift_factor"]) * vae_config["scaling_factor"]
        noise = torch.randn_like(latents)
        t_idx = torch.randint(0, scheduler.config.num_train_timesteps, (latents.shape[0],))
        sigmas = scheduler.sigmas[t_idx].to(DEVICE, latents.dtype).view(-1, 1, 1, 1)
        noisy = (1.0 - sigmas) * latents + sigmas * noise
        pred = transformer(
            hidden_states=noisy,
            timestep=scheduler.timesteps[t_idx].to(DEVICE),
            encoder_hidden_states=prompt_embeds,
            pooled_projections=pooled,
            return_dict=False,
        )[0]
        loss = F.mse_loss(pred.float(), (noise - latents).float())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.4f} mem {torch.cuda.memory_allocated() / 2**30:.1f} GiB")
    transformer.save_pretrained("sd3-lora-out")


if __name__ == "__main__":
    with open("captions.txt") as fh:
        train([line.strip() for line in fh if line.strip()], "cache/latents")
