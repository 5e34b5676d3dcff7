"""A learning-rate sweep prepares a new model and optimizer with one DeepSpeed Accelerator per trial; del and gc.collect() do not free them

Source: https://github.com/huggingface/accelerate/issues/2715
Source: https://github.com/huggingface/accelerate/pull/2716
Style: accelerate
Kind: a model and optimizer created per trial and kept referenced by the shared Accelerator (its lists of prepared objects and engines): host memory grows trial after trial
"""
import torch
import torch.nn as nn
from accelerate import Accelerator, DeepSpeedPlugin
from torch.utils.data import DataLoader, TensorDataset


def build_model(width=4096, depth=8):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.GELU()]
    return nn.Sequential(*layers, nn.Linear(width, 1))


def main(learning_rates=(1e-5, 3e-5, 1e-4, 3e-4, 1e-3), steps=200):
    accelerator = Accelerator(
        mixed_precision="bf16",
        deepspeed_plugin=DeepSpeedPlugin(zero_stage=2, gradient_accumulation_steps=16, gradient_clipping=1.0),
    )
    data = TensorDataset(torch.randn(4096, 4096), torch.randn(4096, 1))
    results = {}
    for lr in learning_rates:
        model = build_model()
        optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        loader = DataLoader(data, batch_size=1, shuffle=True)
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
        model.train()
        total = 0.0
        for step, (x, y) in enumerate(loader):
            if step == steps:
                break
            with accelerator.accumulate(model):
                loss = nn.functional.mse_loss(model(x), y)
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
            total += loss.item()
        results[lr] = total / steps
        model, optimizer, loader = accelerator.free_memory(model, optimizer, loader)
        accelerator.print(f"lr {lr}: loss {results[lr]:.4f}")
    return results


if __name__ == "__main__":
    main()
