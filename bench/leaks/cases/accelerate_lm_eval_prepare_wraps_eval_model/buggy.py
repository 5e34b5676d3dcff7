"""Multi-GPU zero-shot evaluation of a causal LM: the frozen model is passed through accelerator.prepare() as if it were trained

Source: https://github.com/EleutherAI/lm-evaluation-harness/pull/770
Style: accelerate
Kind: a model that is only evaluated is prepared for training: `accelerator.prepare(model)` wraps the 13B fp16 model for distributed training and makes allocations that only training needs, and the multiple-choice log-likelihood evaluation runs out of memory on two 48 GB GPUs; `prepare_model(..., evaluation_mode=True)` skips the training wrapper
"""
import json

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer


class LoglikelihoodScorer:
    def __init__(self, model_name, dtype=torch.float16, batch_size=8):
        self.accelerator = Accelerator()
        self.tokenizer = AutoTokenizer.from_pretrained(model_name)
        self.tokenizer.pad_token = self.tokenizer.eos_token
        model = AutoModelForCausalLM.from_pretrained(model_name, torch_dtype=dtype)
        model.eval()
        self.model = self.accelerator.prepare(model)  # leak: new:prepare-for-eval
        self.batch_size = batch_size

    def _encode(self, context, continuation):
        ctx_ids = self.tokenizer(context, add_special_tokens=False)["input_ids"]
        cont_ids = self.tokenizer(continuation, add_special_tokens=False)["input_ids"]
        return ctx_ids + cont_ids, len(cont_ids)

    @torch.no_grad()
    def score(self, pairs):
        """Sum of continuation log-probabilities for each (context, continuation) pair."""
        scores = []
        for start in range(0, len(pairs), self.batch_size):
            chunk = [self._encode(c, x) for c, x in pairs[start:start + self.batch_size]]
            width = max(len(ids) for ids, _ in chunk)
            input_ids = torch.full((len(chunk), width), self.tokenizer.pad_token_id, dtype=torch.long)
            for row, (ids, _) in enumerate(chunk):
                input_ids[row, :len(ids)] = torch.tensor(ids)
            input_ids = input_ids.to(self.accelerator.device)
            logprobs = F.log_softmax(self.model(input_ids).logits.float(), dim=-1)
            for row, (ids, n_cont) in enumerate(chunk):
                positions = torch.arange(len(ids) - n_cont - 1, len(ids) - 1, device=input_ids.device)
                targets = input_ids[row, len(ids) - n_cont:len(ids)]
                scores.append(logprobs[row, positions, targets].sum().item())
        return scores


def evaluate_piqa(scorer, split="validation"):
    data = load_dataset("piqa", split=split)
    shard = data.shard(scorer.accelerator.num_processes, scorer.accelerator.process_index)
    loader = DataLoader(shard, batch_size=32, collate_fn=lambda rows: rows)
    correct = torch.zeros(2, device=scorer.accelerator.device)
    for rows in loader:
        pairs = []
        for row in rows:
            context = f"Question: {row['goal']}\nAnswer:"
            pairs += [(context, " " + row["sol1"]), (context, " " + row["sol2"])]
        scores = scorer.score(pairs)
        for i, row in enumerate(rows):
            pred = 0 if scores[2 * i] >= scores[2 * i + 1] else 1
            correct[0] += float(pred == row["label"])
            correct[1] += 1
    totals = scorer.accelerator.reduce(correct, reduction="sum")
    return (totals[0] / totals[1]).item()


if __name__ == "__main__":
    scorer = LoglikelihoodScorer("huggyllama/llama-13b")
    acc = evaluate_piqa(scorer)
    if scorer.accelerator.is_main_process:
        print(json.dumps({"task": "piqa", "acc": acc}))
