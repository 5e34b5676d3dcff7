"""Finding the largest batch size that fits: every attempt starts with accelerator.free_memory() and rebuilds the model

Source: https://github.com/huggingface/accelerate/pull/739
Style: accelerate
Kind: negative: a model and optimizer created and prepared on every attempt (the Accelerator's references are dropped by free_memory() first)
"""
import gc

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForSequenceClassification


def try_batch_size(accelerator, batch_size, dataset):
    accelerator.free_memory()
    gc.collect()
    model = AutoModelForSequenceClassification.from_pretrained("bert-large-uncased", num_labels=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    model.train()
    for step, (ids, mask, labels) in enumerate(loader):
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step == 3:
            break
    return True


def main():
    accelerator = Accelerator(mixed_precision="fp16")
    ids = torch.randint(1000, 30000, (4096, 512))
    dataset = TensorDataset(ids, torch.ones_like(ids), torch.randint(0, 2, (4096,)))
    batch_size = 256
    while batch_size >= 1:
        try:
            try_batch_size(accelerator, batch_size, dataset)
            break
        except torch.cuda.OutOfMemoryError:
            accelerator.print(f"batch size {batch_size} does not fit")
            batch_size //= 2
    accelerator.free_memory()
    accelerator.print("largest batch size:", batch_size)


if __name__ == "__main__":
    main()
