"""A preference-optimisation trainer stores the per-step metric tensors it computes, graph attached

Source: https://github.com/huggingface/trl/pull/1531
Style: hf-trainer
Kind: dicts of lists on the trainer keep a graph per step
Runnable from: bench/leaks/cases/hftrainer_preference_trainer_stored_metrics
"""
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyLM(nn.Module):
    def __init__(self, vocab=256, dim=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, input_ids, attention_mask):
        return self.head(self.embed(input_ids) * attention_mask[..., None])


class MiniTrainer:
    """The loop of transformers.Trainer this case needs: compute_loss per step, log every logging_steps."""

    def __init__(self, model, batches, logging_steps=500):
        self.model, self.batches, self.logging_steps = model, batches, logging_steps
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def train(self):
        for step, inputs in enumerate(self.batches, start=1):
            loss = self.compute_loss(self.model, inputs)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            if step % self.logging_steps == 0:
                self.log({"loss": loss.item()})

    def log(self, logs):
        print(logs)


class SimplePreferenceTrainer(MiniTrainer):
    """CPO-style loss: preference term on chosen/rejected log-probs plus NLL on the chosen answers."""

    def __init__(self, *args, beta=0.1, **kwargs):
        super().__init__(*args, **kwargs)
        self.beta = beta
        self._stored_metrics = defaultdict(lambda: defaultdict(list))

    def sequence_logps(self, model, input_ids, attention_mask, labels):
        logits = model(input_ids=input_ids, attention_mask=attention_mask)[:, :-1]
        labels = labels[:, 1:]
        mask = labels != -100
        per_token = torch.gather(logits.log_softmax(-1), 2, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        return (per_token * mask).sum(-1) / mask.sum(-1)

    def get_batch_loss_metrics(self, model, batch, train_eval="train"):
        chosen = self.sequence_logps(model, batch["chosen_input_ids"], batch["chosen_attention_mask"], batch["chosen_labels"])
        rejected = self.sequence_logps(model, batch["rejected_input_ids"], batch["rejected_attention_mask"], batch["rejected_labels"])
        losses = -F.logsigmoid(self.beta * (chosen - rejected))
        nll = -chosen.mean()
        metrics = {
            f"{train_eval}/rewards/chosen": (self.beta * chosen).mean(),
            f"{train_eval}/rewards/margins": (self.beta * (chosen - rejected)).mean(),
            f"{train_eval}/nll_loss": nll,
        }
        return losses.mean() + nll, metrics

    def compute_loss(self, model, inputs, return_outputs=False):
        loss, metrics = self.get_batch_loss_metrics(model, inputs, train_eval="train")
        self.store_metrics(metrics, train_eval="train")
        return (loss, metrics) if return_outputs else loss

    def store_metrics(self, metrics, train_eval="train"):
        for key, value in metrics.items():
            self._stored_metrics[train_eval][key].append(value)  # leak: LL102

    def log(self, logs):
        train_eval = "train" if "loss" in logs else "eval"
        for key, values in self._stored_metrics[train_eval].items():
            logs[key] = torch.stack(values).mean().item()
        del self._stored_metrics[train_eval]
        super().log(logs)


def preference_batches(n=200, batch=4, length=24):
    for _ in range(n):
        ids = {side: torch.randint(0, 256, (batch, length)) for side in ("chosen", "rejected")}
        yield {f"{side}_{name}": value for side, tokens in ids.items()
               for name, value in (("input_ids", tokens), ("attention_mask", torch.ones(batch, length)), ("labels", tokens))}


if __name__ == "__main__":
    torch.manual_seed(0)
    SimplePreferenceTrainer(TinyLM(), preference_batches()).train()
