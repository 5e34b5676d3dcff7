"""A multimodal framework updates its meter with the reduced loss dict, tensors and graphs included

Source: https://github.com/facebookresearch/mmf/pull/560
Style: plain
Kind: graph kept across steps through a meter's update() fed a dict of losses
"""
from collections import defaultdict, deque

import torch
import torch.nn as nn


class SmoothedValue:
    def __init__(self, window_size=20):
        self.deque = deque(maxlen=window_size)
        self.total = 0.0
        self.count = 0

    def update(self, value, batch_size=1):
        self.deque.append(value * batch_size)
        self.count += batch_size
        self.total += value * batch_size

    @property
    def global_avg(self):
        return self.total / self.count


class Meter:
    def __init__(self):
        self.meters = defaultdict(SmoothedValue)

    def update(self, update_dict, batch_size=1):
        for key, value in update_dict.items():
            self.meters[key].update(value, batch_size)

    def __str__(self):
        return ", ".join(f"{k}: {float(m.global_avg):.4f}" for k, m in self.meters.items())


class VisualBert(nn.Module):
    def __init__(self):
        super().__init__()
        self.text = nn.Embedding(30522, 256)
        self.image = nn.Linear(2048, 256)
        self.classifier = nn.Linear(256, 3129)

    def forward(self, input_ids, image_feats, targets):
        fused = self.text(input_ids).mean(1) + self.image(image_feats).mean(1)
        logits = self.classifier(fused)
        return {"losses": {"vqa/logit_bce": nn.functional.binary_cross_entropy_with_logits(logits, targets)}}


def update_meter(report, meter, batch_size):
    reduced_loss_dict = {k: v.mean() for k, v in report["losses"].items()}
    reduced_loss = sum(reduced_loss_dict.values())
    meter_update_dict = {"total_loss": reduced_loss.item()}
    meter_update_dict.update({key: loss.item() for key, loss in reduced_loss_dict.items()})
    meter.update(meter_update_dict, batch_size)


if __name__ == "__main__":
    model, meter = VisualBert(), Meter()
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    for step in range(88_000):
        report = model(torch.randint(0, 30522, (32, 20)), torch.randn(32, 100, 2048), torch.rand(32, 3129))
        loss = sum(report["losses"].values())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        update_meter(report, meter, 32)
        if step % 100 == 0:
            print(step, meter)
