"""Trainer with compute_metrics on a language model caches the full-vocabulary logits of the whole eval set

Source: https://github.com/huggingface/transformers/issues/15466
Source: https://github.com/huggingface/transformers/issues/12878
Style: hf-trainer
Kind: device memory grows without a graph: [eval size, seq len, vocab] logits accumulated before compute_metrics only needs their argmax
"""
import numpy as np
from datasets import Dataset
from transformers import (AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, Trainer,
                          TrainingArguments)


def keep_argmax(logits, labels):
    return logits.argmax(dim=-1)


def token_accuracy(eval_pred):
    preds, labels = eval_pred
    preds = preds[:, :-1]
    labels = labels[:, 1:]
    mask = labels != -100
    return {"token_accuracy": float((preds[mask] == labels[mask]).mean())}


def build_dataset(tokenizer, n, block=512):
    text = ["the quick brown fox jumps over the lazy dog " * 80 for _ in range(n)]
    enc = tokenizer(text, truncation=True, max_length=block)
    return Dataset.from_dict(dict(enc))


def main():
    tokenizer = AutoTokenizer.from_pretrained("gpt2")
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    train_ds = build_dataset(tokenizer, 20_000)
    eval_ds = build_dataset(tokenizer, 5_000)
    args = TrainingArguments(
        "out/gpt2-domain",
        per_device_train_batch_size=8,
        per_device_eval_batch_size=16,
        evaluation_strategy="steps",
        eval_steps=1000,
        num_train_epochs=3,
        report_to=[],
    )
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
        compute_metrics=token_accuracy,
        preprocess_logits_for_metrics=keep_argmax,
    )
    trainer.train()
    print(trainer.evaluate())


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    main()
