"""An LLM fine-tuning loop on accelerate + DeepSpeed sums the loss tensor for its epoch report

Source: https://github.com/ray-project/ray/pull/40940
Style: accelerate
Kind: loss accumulated across steps with the graph
"""
import time

import torch
from accelerate import Accelerator, DeepSpeedPlugin
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, default_data_collator


def build_dataset(tokenizer, n=10_000, length=512):
    text = ["### Question: what is the capital of France?\n### Answer: Paris." * 20] * n
    enc = tokenizer(text, truncation=True, max_length=length, padding="max_length")
    return [{"input_ids": i, "attention_mask": m, "labels": i} for i, m in zip(enc["input_ids"], enc["attention_mask"])]


def training_function(config):
    accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=3), gradient_accumulation_steps=config["grad_accum"])
    tokenizer = AutoTokenizer.from_pretrained(config["model_id"])
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(config["model_id"], torch_dtype=torch.bfloat16)
    loader = DataLoader(build_dataset(tokenizer), batch_size=config["batch_size"], collate_fn=default_data_collator, shuffle=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"])
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(config["epochs"]):
        model.train()
        loss_sum = torch.tensor(0.0).to(accelerator.device)
        s_epoch = time.time()
        for step, batch in enumerate(loader):
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                loss_sum += loss  # leak: LL101
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
            if accelerator.is_main_process and step % 50 == 0:
                print(f"[epoch {epoch} step {step}] loss {loss.item():.4f}")
        mean_loss = accelerator.gather(loss_sum).mean().item() / (step + 1)
        accelerator.print(f"epoch {epoch}: mean loss {mean_loss:.4f}, {time.time() - s_epoch:.0f}s")


if __name__ == "__main__":
    training_function({"model_id": "meta-llama/Llama-2-7b-hf", "batch_size": 8, "grad_accum": 4, "lr": 2e-5, "epochs": 3})
