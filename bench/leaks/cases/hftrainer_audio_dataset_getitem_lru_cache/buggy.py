"""An unbounded lru_cache on a fine-tuning dataset's __getitem__ keeps every decoded example

Source: https://github.com/MoonshotAI/Kimi-Audio/issues/117
Style: hf-trainer
Kind: cache on a method grows with every new input (the whole training set, as tensors)
"""
import json
from functools import lru_cache
from typing import Dict

import torch
from torch.utils.data import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments


class LazySupervisedDataset(Dataset):
    def __init__(self, path, tokenizer, max_len=2048):
        with open(path) as handle:
            self.raw = [json.loads(line) for line in handle]
        self.tokenizer = tokenizer
        self.max_len = max_len

    def __len__(self):
        return len(self.raw)

    @lru_cache(maxsize=None)  # leak: LL301
    def __getitem__(self, i) -> Dict[str, torch.Tensor]:
        sample = self.raw[i]
        audio_tokens = torch.tensor(sample["audio_tokens"], dtype=torch.long)
        text = self.tokenizer(sample["text"], truncation=True, max_length=self.max_len - len(audio_tokens), return_tensors="pt")
        input_ids = torch.cat([audio_tokens, text["input_ids"][0]])
        labels = input_ids.clone()
        labels[: len(audio_tokens)] = -100
        return {"input_ids": input_ids, "labels": labels, "attention_mask": torch.ones_like(input_ids)}


def collate(features):
    width = max(len(f["input_ids"]) for f in features)
    batch = {}
    for key, pad in (("input_ids", 0), ("labels", -100), ("attention_mask", 0)):
        batch[key] = torch.stack([torch.nn.functional.pad(f[key], (0, width - len(f[key])), value=pad) for f in features])
    return batch


def main():
    tokenizer = AutoTokenizer.from_pretrained("Qwen/Qwen2-0.5B")
    model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2-0.5B")
    train = LazySupervisedDataset("finetune_codes/train.jsonl", tokenizer)
    args = TrainingArguments("out/audio-sft", per_device_train_batch_size=4, num_train_epochs=3,
                             dataloader_num_workers=4, save_strategy="epoch", report_to=[])
    Trainer(model=model, args=args, train_dataset=train, data_collator=collate).train()


if __name__ == "__main__":
    main()
