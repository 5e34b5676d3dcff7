"""Accelerate evaluation loop for a token classifier: predictions are gathered across processes and moved to the CPU batch by batch

Source: https://huggingface.co/docs/accelerate/package_reference/accelerator#accelerate.Accelerator.gather_for_metrics
Style: accelerate
Kind: negative: resembles predictions and labels kept on the GPU for a whole evaluation (device accumulation) and an evaluation forward without no_grad; the forward runs under torch.no_grad(), logits are reduced to label ids before `gather_for_metrics`, and each gathered batch is moved to the CPU as numpy before it is kept, so GPU memory stays at one batch
"""
import numpy as np
import torch
from accelerate import Accelerator
from transformers import AutoModelForTokenClassification, get_linear_schedule_with_warmup


def evaluate(model, loader, accelerator):
    model.eval()
    all_preds, all_labels = [], []
    for batch in loader:
        with torch.no_grad():
            outputs = model(**batch)
        preds = outputs.logits.argmax(dim=-1)
        labels = batch["labels"]
        preds = accelerator.pad_across_processes(preds, dim=1, pad_index=-100)
        labels = accelerator.pad_across_processes(labels, dim=1, pad_index=-100)
        preds, labels = accelerator.gather_for_metrics((preds, labels))
        all_preds.append(preds.cpu().numpy())
        all_labels.append(labels.cpu().numpy())
    width = max(p.shape[1] for p in all_preds)
    preds = np.concatenate([np.pad(p, ((0, 0), (0, width - p.shape[1])), constant_values=-100) for p in all_preds])
    labels = np.concatenate([np.pad(l, ((0, 0), (0, width - l.shape[1])), constant_values=-100) for l in all_labels])
    valid = labels != -100
    return float((preds[valid] == labels[valid]).mean())


def main(train_loader, eval_loader, model_name="bert-base-cased", num_labels=9, epochs=3):
    accelerator = Accelerator(mixed_precision="bf16")
    model = AutoModelForTokenClassification.from_pretrained(model_name, num_labels=num_labels)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    scheduler = get_linear_schedule_with_warmup(optimizer, 100, epochs * len(train_loader))
    model, optimizer, train_loader, eval_loader, scheduler = accelerator.prepare(
        model, optimizer, train_loader, eval_loader, scheduler
    )
    for epoch in range(epochs):
        model.train()
        for batch in train_loader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        acc = evaluate(model, eval_loader, accelerator)
        accelerator.print(f"epoch {epoch}: token accuracy {acc:.4f}")
    accelerator.wait_for_everyone()
    accelerator.unwrap_model(model).save_pretrained("ner-out", save_function=accelerator.save)
