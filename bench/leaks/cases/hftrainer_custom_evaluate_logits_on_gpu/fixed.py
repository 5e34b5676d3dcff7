"""A custom evaluate() concatenates every batch's logits on the GPU before moving them to the CPU

Source: https://github.com/huggingface/transformers/issues/7232
Style: hf-trainer
Kind: device memory grows without a graph: predictions kept on the GPU over a whole evaluation
"""
import numpy as np
import torch
from datasets import Dataset
from transformers import AutoModelForTokenClassification, AutoTokenizer, Trainer, TrainingArguments


class TaggingTrainer(Trainer):
    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
        loader = self.get_eval_dataloader(eval_dataset)
        model = self.model.eval()
        preds, labels = None, None
        with torch.no_grad():
            for inputs in loader:
                inputs = self._prepare_inputs(inputs)
                logits = model(**inputs).logits
                step_preds, step_labels = logits.argmax(-1).cpu(), inputs["labels"].cpu()
                preds = step_preds if preds is None else torch.cat((preds, step_preds), dim=0)
                labels = step_labels if labels is None else torch.cat((labels, step_labels), dim=0)
        preds, labels = preds.numpy(), labels.numpy()
        mask = labels != -100
        metrics = {f"{metric_key_prefix}_accuracy": float(np.mean(preds[mask] == labels[mask]))}
        self.log(metrics)
        return metrics


def main():
    tokenizer = AutoTokenizer.from_pretrained("bert-base-cased")
    model = AutoModelForTokenClassification.from_pretrained("bert-base-cased", num_labels=9)
    sentences = [f"token {i} " * 40 for i in range(469_530)]
    data = Dataset.from_dict({"text": sentences})

    def encode(batch):
        enc = tokenizer(batch["text"], truncation=True, padding="max_length", max_length=128)
        enc["labels"] = [[i % 9 for i in range(128)] for _ in batch["text"]]
        return enc

    data = data.map(encode, batched=True, remove_columns=["text"])
    args = TrainingArguments("out/ner", per_device_eval_batch_size=128, report_to=[])
    print(TaggingTrainer(model=model, args=args, eval_dataset=data).evaluate())


if __name__ == "__main__":
    main()
