"""Subject-driven image model fine-tuning with Accelerate: the prepared dataloader is wrapped in itertools.cycle for a step-based loop

Source: https://github.com/bytedance/UNO/issues/64
Source: https://github.com/bytedance/UNO/issues/49
Style: accelerate
Kind: every batch cached for the whole run: `itertools.cycle` keeps a reference to each element it yields so it can replay them, and the Accelerate-prepared dataloader yields batches already on the GPU, so device memory grows with every step of the first pass until CUDA runs out (about a thousand steps on 80 GB cards)
"""
import itertools

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader


def flow_matching_loss(model, batch):
    latents, cond = batch["latents"], batch["cond"]
    noise = torch.randn_like(latents)
    t = torch.rand(latents.shape[0], device=latents.device).view(-1, 1, 1, 1)
    noisy = (1.0 - t) * latents + t * noise
    pred = model(noisy, t.flatten(), cond)
    return F.mse_loss(pred.float(), (noise - latents).float())


def train(model, train_set, max_steps=20_000, lr=1e-5, batch_size=1, grad_accum=4, ckpt_every=1000):
    accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=grad_accum)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=1e-2)
    loader = DataLoader(train_set, batch_size=batch_size, shuffle=True, num_workers=4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    batches = itertools.cycle(loader)  # leak: new:cache-growth
    model.train()
    for step in range(1, max_steps + 1):
        batch = next(batches)
        with accelerator.accumulate(model):
            loss = flow_matching_loss(model, batch)
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
        if step % 50 == 0:
            used = torch.cuda.memory_allocated() / 2**30
            accelerator.print(f"step {step}: loss {loss.item():.4f}, allocated {used:.1f} GiB")
        if step % ckpt_every == 0:
            accelerator.wait_for_everyone()
            if accelerator.is_main_process:
                torch.save(accelerator.unwrap_model(model).state_dict(), f"ckpt_{step}.pt")
    accelerator.end_training()


def main(model, train_set):
    for p in model.parameters():
        p.requires_grad_(False)
    for name, p in model.named_parameters():
        if "lora" in name:
            p.requires_grad_(True)
    train(model, train_set)
