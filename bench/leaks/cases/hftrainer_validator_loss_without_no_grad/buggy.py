"""A validator scores candidate language models on evaluation batches with autograd recording

Source: https://github.com/macrocosm-os/pretraining/pull/104
Style: hf-trainer
Kind: evaluation forward records a graph nobody uses
"""
import math

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def compute_losses(model, batches, device):
    model.to(device)
    model.eval()
    losses = []
    for inputs in batches:
        inputs = inputs.to(device)
        logits = model(inputs).logits  # leak: LL201
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = inputs[..., 1:].contiguous()
        loss = torch.nn.functional.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
        losses.append(loss.item())
    return losses


def score_candidates(candidates, batches, device):
    scores = {}
    for name in candidates:
        model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16)
        losses = compute_losses(model, batches, device)
        scores[name] = math.exp(sum(losses) / len(losses))
        del model
        torch.cuda.empty_cache()
    return scores


if __name__ == "__main__":
    tokenizer = AutoTokenizer.from_pretrained("gpt2")
    pages = [" ".join(f"word{j}" for j in range(900)) for _ in range(64)]
    batches = [tokenizer(pages[i:i + 4], return_tensors="pt", truncation=True, max_length=1024)["input_ids"] for i in range(0, 64, 4)]
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(score_candidates(["gpt2", "gpt2-medium", "distilgpt2"], batches, device))
