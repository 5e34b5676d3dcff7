"""A sample-generation callback closes its no_grad block before calling generate(), which is no_grad itself

Source: https://github.com/axolotl-ai-cloud/axolotl/pull/3240
Style: hf-trainer
Kind: negative: periodic sampling inside the training loop outside a no_grad block (transformers' generate() is decorated with @torch.no_grad())
"""
import torch
from transformers import TrainerCallback


def generate_samples(model, tokenizer, dataloader, num_samples=4, max_new_tokens=128):
    model.eval()
    generations = []
    try:
        with torch.no_grad():
            samples_collected = 0

        for batch in dataloader:
            if samples_collected >= num_samples:
                break
            prompt_ids = batch["input_ids"][:1, : batch["input_ids"].shape[1] // 2].to(model.device)
            generated_ids = model.generate(prompt_ids, max_new_tokens=max_new_tokens, do_sample=True, top_p=0.9)
            prompt_text = tokenizer.decode(prompt_ids[0], skip_special_tokens=True)
            full_text = tokenizer.decode(generated_ids[0], skip_special_tokens=True)
            generations.append({"prompt": prompt_text, "generated": full_text[len(prompt_text):], "full_text": full_text})
            samples_collected += 1
    finally:
        model.train()
    return generations


class SampleGenerationCallback(TrainerCallback):
    """Every N steps, prints a few generations so drift shows up early."""

    def __init__(self, tokenizer, dataloader, every=200):
        self.tokenizer = tokenizer
        self.dataloader = dataloader
        self.every = every

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if state.global_step % self.every == 0 and state.is_world_process_zero:
            for sample in generate_samples(model, self.tokenizer, self.dataloader):
                print(f"[step {state.global_step}] {sample['prompt']!r} -> {sample['generated']!r}")
        return control


if __name__ == "__main__":
    from torch.utils.data import DataLoader
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained("gpt2")
    lm = AutoModelForCausalLM.from_pretrained("gpt2")
    loader = DataLoader([{"input_ids": tok("hello there, how are you today?", return_tensors="pt")["input_ids"][0]}] * 8)
    print(generate_samples(lm, tok, loader))
