"""A preference-optimisation trainer stores the per-step metric tensors it computes, graph attached

Source: https://github.com/huggingface/trl/pull/1531
Style: hf-trainer
Kind: dicts of lists on the trainer keep a graph per step
"""
from collections import defaultdict

import torch
import torch.nn.functional as F
from transformers import Trainer


class SimplePreferenceTrainer(Trainer):
    """CPO-style loss: preference term on chosen/rejected log-probs plus NLL on the chosen answers."""

    def __init__(self, *args, beta=0.1, **kwargs):
        super().__init__(*args, **kwargs)
        self.beta = beta
        self._stored_metrics = defaultdict(lambda: defaultdict(list))

    def sequence_logps(self, model, input_ids, attention_mask, labels):
        logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1]
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

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss, metrics = self.get_batch_loss_metrics(model, inputs, train_eval="train")
        self.store_metrics(metrics, train_eval="train")
        return (loss, metrics) if return_outputs else loss

    def store_metrics(self, metrics, train_eval="train"):
        for key, value in metrics.items():
            self._stored_metrics[train_eval][key].append(value.detach())

    def log(self, logs, *args, **kwargs):
        train_eval = "train" if "loss" in logs else "eval"
        for key, values in self._stored_metrics[train_eval].items():
            logs[key] = torch.stack(values).mean().item()
        del self._stored_metrics[train_eval]
        super().log(logs, *args, **kwargs)
