"""An accelerate fine-tuning loop sums loss.detach() for its epoch report

Source: https://huggingface.co/docs/accelerate/usage_guides/gradient_accumulation
Style: accelerate
Kind: negative: loss accumulated across steps (detached)
"""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, default_data_collator


def build_dataset(tokenizer, n=10_000, length=256):
    enc = tokenizer(["### Instruction: add two numbers\n### Response: 4"] * n, truncation=True, max_length=length, padding="max_length")
    return [{"input_ids": i, "attention_mask": m, "labels": i} for i, m in zip(enc["input_ids"], enc["attention_mask"])]


def main(epochs=3):
    accelerator = Accelerator(gradient_accumulation_steps=4, mixed_precision="bf16")
    tokenizer = AutoTokenizer.from_pretrained("EleutherAI/pythia-410m")
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained("EleutherAI/pythia-410m")
    loader = DataLoader(build_dataset(tokenizer), batch_size=8, collate_fn=default_data_collator, shuffle=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(epochs):
        model.train()
        loss_sum = torch.tensor(0.0, device=accelerator.device)
        for step, batch in enumerate(loader):
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                loss_sum += loss.detach()
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
        mean_loss = accelerator.gather(loss_sum).mean().item() / (step + 1)
        accelerator.print(f"epoch {epoch}: {mean_loss:.4f}")


if __name__ == "__main__":
    main()
