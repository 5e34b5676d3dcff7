"""Validation prompt embeddings computed each validation are kept on self for the whole training

Source: https://github.com/PixArt-alpha/PixArt-sigma/pull/102
Style: accelerate
Kind: a cache on self grows with every validation (T5 embeddings on the GPU)
"""
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset
from transformers import T5EncoderModel, T5Tokenizer


class ValidationPrompts:
    def __init__(self, prompts, tokenizer, text_encoder, device):
        self.prompts = prompts
        self.tokenizer = tokenizer
        self.text_encoder = text_encoder
        self.device = device

    @torch.no_grad()
    def encode(self, step):
        tokens = self.tokenizer(self.prompts, max_length=300, padding="max_length", truncation=True, return_tensors="pt").to(self.device)
        emb = self.text_encoder(tokens.input_ids, attention_mask=tokens.attention_mask)[0]
        return emb, tokens.attention_mask


class TinyPixArt(nn.Module):
    def __init__(self, dim=1152, text_dim=4096):
        super().__init__()
        self.text_proj = nn.Linear(text_dim, dim)
        self.blocks = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, 4 * 32 * 32))

    def forward(self, text_emb):
        return self.blocks(self.text_proj(text_emb).mean(1)).view(-1, 4, 32, 32)


def main(steps=100_000, validate_every=500):
    accelerator = Accelerator(mixed_precision="bf16")
    tokenizer = T5Tokenizer.from_pretrained("google/t5-v1_1-xxl")
    text_encoder = T5EncoderModel.from_pretrained("google/t5-v1_1-xxl", torch_dtype=torch.bfloat16).to(accelerator.device)
    validation = ValidationPrompts(["a red fox in snow", "a city at night"], tokenizer, text_encoder, accelerator.device)
    model = TinyPixArt()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    loader = DataLoader(TensorDataset(torch.randn(10_000, 120, 4096), torch.randn(10_000, 4, 32, 32)), batch_size=12, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    step = 0
    while step < steps:
        for text_emb, latents in loader:
            loss = nn.functional.mse_loss(model(text_emb), latents)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            if step % validate_every == 0:
                emb, _ = validation.encode(step)
                with torch.no_grad():
                    preview = model(emb.float())
                accelerator.print(step, loss.item(), preview.std().item())


if __name__ == "__main__":
    main()
