"""An accelerate evaluation loop gathers logits from every process and keeps concatenating them on the GPU

Source: https://github.com/huggingface/transformers/pull/28769
Style: accelerate
Kind: device memory grows without a graph: gathered predictions kept on the GPU over a whole evaluation
"""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForSequenceClassification


def evaluate(model, loader, accelerator):
    model.eval()
    preds_host, labels_host = None, None
    for input_ids, attention_mask, labels in loader:
        with torch.no_grad():
            logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
        logits, labels = accelerator.gather_for_metrics((logits, labels))
        logits, labels = logits.cpu(), labels.cpu()
        preds_host = logits if preds_host is None else torch.cat([preds_host, logits])
        labels_host = labels if labels_host is None else torch.cat([labels_host, labels])
    probs = preds_host.float().softmax(-1).cpu()
    labels = labels_host.cpu()
    accuracy = (probs.argmax(-1) == labels).float().mean().item()
    nll = torch.nn.functional.nll_loss(probs.clamp_min(1e-9).log(), labels).item()
    return {"accuracy": accuracy, "nll": nll}


def main():
    accelerator = Accelerator()
    model = AutoModelForSequenceClassification.from_pretrained("bert-large-uncased", num_labels=1000)
    n = 300_000
    data = TensorDataset(torch.randint(0, 30000, (n, 128)), torch.ones(n, 128, dtype=torch.long), torch.randint(0, 1000, (n,)))
    loader = DataLoader(data, batch_size=256)
    model, loader = accelerator.prepare(model, loader)
    accelerator.print(evaluate(model, loader, accelerator))


if __name__ == "__main__":
    main()
