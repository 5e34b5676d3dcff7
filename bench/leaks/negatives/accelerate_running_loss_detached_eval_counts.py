"""Accelerate text classifier: running loss kept as a detached tensor, evaluation under no_grad with per-batch counts

Source: https://huggingface.co/docs/accelerate/quicktour
Style: accelerate
Kind: negative: resembles loss accumulation across steps with the graph (LL101), an evaluation forward without no_grad (LL201) and predictions kept over a whole evaluation (device-accumulation); the running loss adds `loss.detach()`, evaluation runs under `torch.no_grad()`, and only two Python ints per batch survive the gathered predictions
"""
import torch
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding, get_linear_schedule_with_warmup

CHECKPOINT = "distilroberta-base"


def build_loaders(tokenizer, batch_size=32):
    raw = load_dataset("glue", "sst2")
    tokenized = raw.map(lambda b: tokenizer(b["sentence"], truncation=True, max_length=128), batched=True)
    tokenized = tokenized.remove_columns(["sentence", "idx"]).rename_column("label", "labels")
    tokenized.set_format("torch")
    collate = DataCollatorWithPadding(tokenizer)
    train = DataLoader(tokenized["train"], batch_size=batch_size, shuffle=True, collate_fn=collate)
    valid = DataLoader(tokenized["validation"], batch_size=128, collate_fn=collate)
    return train, valid


def evaluate(accelerator, model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for batch in loader:
            logits = model(**batch).logits
            preds, refs = accelerator.gather_for_metrics((logits.argmax(dim=-1), batch["labels"]))
            correct += (preds == refs).sum().item()
            total += refs.numel()
    model.train()
    return correct / max(total, 1)


def main(epochs=3, lr=2e-5):
    accelerator = Accelerator(mixed_precision="bf16")
    tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)
    model = AutoModelForSequenceClassification.from_pretrained(CHECKPOINT, num_labels=2)
    train_loader, valid_loader = build_loaders(tokenizer)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    scheduler = get_linear_schedule_with_warmup(optimizer, 100, epochs * len(train_loader))
    model, optimizer, train_loader, valid_loader, scheduler = accelerator.prepare(
        model, optimizer, train_loader, valid_loader, scheduler
    )

    for epoch in range(epochs):
        running = torch.zeros((), device=accelerator.device)
        for step, batch in enumerate(train_loader):
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            running += loss.detach()
            if (step + 1) % 200 == 0:
                mean_loss = accelerator.gather(running).mean().item() / (step + 1)
                accelerator.print(f"epoch {epoch} step {step + 1} loss {mean_loss:.4f}")
        accelerator.print(f"epoch {epoch} accuracy {evaluate(accelerator, model, valid_loader):.4f}")

    accelerator.wait_for_everyone()
    accelerator.unwrap_model(model).save_pretrained("out/sst2", save_function=accelerator.save)


if __name__ == "__main__":
    main()
