"""A hand-written generate() feeds past key/values from the model output back in, with autograd on

Source: https://github.com/allenai/OLMo/pull/164
Style: seq2seq
Kind: a kv-cache taken from an output attribute and fed into the next step with its graph (custom generate)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast


class Generator:
    def __init__(self, model, tokenizer, device):
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.device = device

    @torch.no_grad()
    def generate(self, prompt, max_steps=200, temperature=0.8, beam_size=1):
        input_ids = self.tokenizer(prompt, return_tensors="pt").input_ids.to(self.device)
        input_ids = input_ids.repeat(beam_size, 1)
        past_key_values = None
        tokens = input_ids
        step_input = input_ids
        for _ in range(max_steps):
            outputs = self.model(step_input, past_key_values=past_key_values, use_cache=True)
            past_key_values = outputs.past_key_values
            logits = outputs.logits[:, -1, :] / temperature
            next_token = torch.multinomial(F.softmax(logits, dim=-1), 1)
            tokens = torch.cat([tokens, next_token], dim=1)
            step_input = next_token
            if (next_token == self.tokenizer.eos_token_id).all():
                break
        return self.tokenizer.batch_decode(tokens, skip_special_tokens=True)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tokenizer = GPT2TokenizerFast.from_pretrained("gpt2")
    model = GPT2LMHeadModel(GPT2Config(n_layer=24, n_embd=1024, n_head=16))
    generator = Generator(model, tokenizer, device)
    for prompt in ["The history of the printing press", "In a distant galaxy"]:
        print(generator.generate(prompt)[0])
