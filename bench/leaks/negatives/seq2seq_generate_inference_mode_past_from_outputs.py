"""A custom generation loop feeds past_key_values from the model output back in, under inference_mode

Source: https://pytorch.org/docs/stable/generated/torch.inference_mode.html
Style: seq2seq
Kind: negative: a kv-cache taken from an output attribute and fed into the next step (no graph recorded)
"""
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


class Generator:
    def __init__(self, name="gpt2-medium"):
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.tokenizer = AutoTokenizer.from_pretrained(name)
        self.model = AutoModelForCausalLM.from_pretrained(name).to(self.device).eval()

    @torch.inference_mode()
    def generate(self, prompt, max_new_tokens=256, temperature=0.7):
        input_ids = self.tokenizer(prompt, return_tensors="pt").input_ids.to(self.device)
        past, step_input, generated = None, input_ids, []
        for _ in range(max_new_tokens):
            outputs = self.model(step_input, past_key_values=past, use_cache=True)
            past = outputs.past_key_values
            probs = torch.softmax(outputs.logits[:, -1] / temperature, dim=-1)
            step_input = torch.multinomial(probs, 1)
            generated.append(step_input.item())
            if step_input.item() == self.tokenizer.eos_token_id:
                break
        return self.tokenizer.decode(generated)


def parse_args():
    import argparse

    parser = argparse.ArgumentParser(description="Sample continuations token by token")
    parser.add_argument("--model", default="gpt2-medium")
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--max-new-tokens", type=int, default=256)
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    generator = Generator(args.model)
    prompts = ["The committee agreed to", "Rain fell on the", "Our results show that"]
    for i in range(args.samples):
        print(generator.generate(prompts[i % len(prompts)], max_new_tokens=args.max_new_tokens))
