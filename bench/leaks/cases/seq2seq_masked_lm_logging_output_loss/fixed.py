"""A masked-LM criterion returns the loss tensor inside its logging output, which the trainer keeps per interval

Source: https://github.com/facebookresearch/fairseq/issues/2255
Style: seq2seq
Kind: graph kept across steps through logging outputs collected for aggregation
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskedLmLoss:
    def __init__(self, padding_idx=1):
        self.padding_idx = padding_idx

    def __call__(self, model, sample):
        masked = sample["target"].ne(self.padding_idx)
        logits = model(sample["net_input"])[masked]
        targets = sample["target"][masked]
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), reduction="sum")
        sample_size = int(masked.sum())
        logging_output = {
            "loss": loss.detach(),
            "ntokens": sample["ntokens"],
            "nsentences": sample["target"].size(0),
            "sample_size": sample_size,
        }
        return loss, sample_size, logging_output

    @staticmethod
    def reduce_metrics(logging_outputs):
        loss_sum = sum(float(log["loss"]) for log in logging_outputs)
        sample_size = sum(log["sample_size"] for log in logging_outputs)
        return {"loss": loss_sum / sample_size / math.log(2)}


class Trainer:
    def __init__(self, model, criterion, log_interval=1000):
        self.model, self.criterion, self.log_interval = model, criterion, log_interval
        self.optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
        self._logging_outputs = []

    def train_step(self, sample, num_updates):
        loss, sample_size, logging_output = self.criterion(self.model, sample)
        self.optimizer.zero_grad()
        (loss / sample_size).backward()
        self.optimizer.step()
        self._logging_outputs.append(logging_output)
        if num_updates % self.log_interval == 0:
            print(num_updates, self.criterion.reduce_metrics(self._logging_outputs))
            self._logging_outputs = []


if __name__ == "__main__":
    model = nn.Sequential(nn.Embedding(32_000, 512), nn.Linear(512, 512), nn.GELU(), nn.Linear(512, 32_000))
    trainer = Trainer(model, MaskedLmLoss())
    for update in range(1, 500_001):
        tokens = torch.randint(2, 32_000, (16, 512))
        target = torch.where(torch.rand(16, 512) < 0.15, tokens, torch.ones_like(tokens))
        trainer.train_step({"net_input": tokens, "target": target, "ntokens": tokens.numel()}, update)
