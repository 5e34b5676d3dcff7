"""Accelerate training wrapped in find_executable_batch_size: each retry prepares new objects after free_memory()

Source: https://huggingface.co/docs/accelerate/usage_guides/memory
Style: accelerate
Kind: negative: resembles accelerator.prepare() run on every call of a function that runs many times (prepare-per-call) and models built per call; the inner function runs once per out-of-memory retry, a handful of times at most, and it starts with `accelerator.free_memory()`, which drops every reference the Accelerator kept to the objects prepared by the previous attempt, as the documentation prescribes
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import find_executable_batch_size
from torch.utils.data import DataLoader


def build_model(vocab=32000, dim=768, n_classes=4):
    return nn.Sequential(nn.EmbeddingBag(vocab, dim), nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, n_classes))


def training_function(train_set, eval_set, epochs=3, start_batch_size=512, lr=3e-4):
    accelerator = Accelerator(mixed_precision="bf16")

    @find_executable_batch_size(starting_batch_size=start_batch_size)
    def inner_training_loop(batch_size):
        nonlocal accelerator
        accelerator.free_memory()
        model = build_model()
        optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        train_dl = DataLoader(train_set, batch_size=batch_size, shuffle=True)
        eval_dl = DataLoader(eval_set, batch_size=batch_size * 2)
        model, optimizer, train_dl, eval_dl = accelerator.prepare(model, optimizer, train_dl, eval_dl)
        for epoch in range(epochs):
            model.train()
            running = 0.0
            for tokens, labels in train_dl:
                loss = F.cross_entropy(model(tokens), labels)
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
                running += loss.detach().float()
            model.eval()
            correct = total = 0
            with torch.no_grad():
                for tokens, labels in eval_dl:
                    preds = model(tokens).argmax(-1)
                    preds, labels = accelerator.gather_for_metrics((preds, labels))
                    correct += (preds == labels).sum().item()
                    total += labels.numel()
            accelerator.print(f"bs={batch_size} epoch {epoch}: loss {running.item() / len(train_dl):.4f} "
                              f"acc {correct / max(total, 1):.3f}")
        return accelerator.unwrap_model(model)

    model = inner_training_loop()
    accelerator.save(model.state_dict(), "classifier.pt")
