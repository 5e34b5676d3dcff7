"""An accelerate evaluation loop gathers predictions and moves them to the CPU before keeping them

Source: https://github.com/huggingface/transformers/pull/21845
Style: accelerate
Kind: negative: predictions kept over a whole evaluation (on the CPU, batch by batch)
"""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForSequenceClassification


def evaluate(model, loader, accelerator):
    model.eval()
    all_preds, all_labels = [], []
    for input_ids, attention_mask, labels in loader:
        with torch.no_grad():
            logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
        preds, labels = accelerator.gather_for_metrics((logits.argmax(-1), labels))
        all_preds.append(preds.cpu())
        all_labels.append(labels.cpu())
    preds, labels = torch.cat(all_preds), torch.cat(all_labels)
    return {"accuracy": (preds == labels).float().mean().item()}


def parse_args():
    import argparse

    parser = argparse.ArgumentParser(description="Evaluate a classifier on every process")
    parser.add_argument("--model", default="bert-base-uncased")
    parser.add_argument("--examples", type=int, default=200_000)
    return parser.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator()
    model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=3)
    n = args.examples
    data = TensorDataset(torch.randint(0, 30000, (n, 128)), torch.ones(n, 128, dtype=torch.long), torch.randint(0, 3, (n,)))
    model, loader = accelerator.prepare(model, DataLoader(data, batch_size=256))
    accelerator.print(evaluate(model, loader, accelerator))


if __name__ == "__main__":
    main()
