"""Evaluation moves predictions to the CPU every few steps and reduces logits to ids on the GPU first

Source: https://github.com/huggingface/transformers/pull/7767
Style: hf-trainer
Kind: negative: predictions accumulated over a whole evaluation (offloaded with eval_accumulation_steps)
"""
import numpy as np
import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments


def preprocess_logits_for_metrics(logits, labels):
    return logits.argmax(dim=-1)


def compute_metrics(eval_pred):
    preds, labels = eval_pred
    preds, labels = preds[:, :-1], labels[:, 1:]
    mask = labels != -100
    return {"token_accuracy": float(np.mean(preds[mask] == labels[mask]))}


def main():
    tokenizer = AutoTokenizer.from_pretrained("gpt2")
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    texts = [f"line {i}: the quick brown fox jumps over the lazy dog" for i in range(100_000)]
    data = Dataset.from_dict({"text": texts}).map(
        lambda b: tokenizer(b["text"], truncation=True, max_length=64, padding="max_length"), batched=True)
    data = data.map(lambda b: {"labels": b["input_ids"]}, batched=True)
    args = TrainingArguments("out/lm-eval", per_device_eval_batch_size=64, eval_accumulation_steps=20, report_to=[])
    trainer = Trainer(model=model, args=args, eval_dataset=data, compute_metrics=compute_metrics,
                      preprocess_logits_for_metrics=preprocess_logits_for_metrics)
    print(trainer.evaluate())


if __name__ == "__main__":
    with torch.no_grad():
        main()
