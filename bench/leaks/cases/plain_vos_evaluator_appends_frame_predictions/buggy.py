"""A video object segmentation evaluator appends every frame's probability map before writing them out

Source: https://github.com/yoxu515/aot-benchmark/issues/74
Style: plain
Kind: device memory grows without a graph: per-frame predictions kept on the GPU for a whole sequence
"""
import os

import numpy as np
import torch
import torch.nn as nn
from PIL import Image


class AOTEngine(nn.Module):
    def __init__(self, max_obj=10):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 64, 4, 4), nn.ReLU(), nn.Conv2d(64, 256, 2, 2), nn.ReLU())
        self.decoder = nn.Conv2d(256 + max_obj + 1, max_obj + 1, 1)
        self.memory = None

    def add_reference(self, frame, mask):
        self.memory = nn.functional.interpolate(mask, scale_factor=1 / 8)

    def match_propagate(self, frame):
        feats = self.encoder(frame)
        logits = self.decoder(torch.cat([feats, self.memory], dim=1))
        self.memory = logits.softmax(1)
        return nn.functional.interpolate(logits, size=frame.shape[-2:], mode="bilinear")


class Evaluator:
    def __init__(self, engine, output_root):
        self.engine, self.output_root = engine, output_root

    @torch.no_grad()
    def evaluate_sequence(self, name, frames, first_mask):
        self.engine.add_reference(frames[0], first_mask)
        all_preds = []
        for frame in frames[1:]:
            pred_prob = self.engine.match_propagate(frame).softmax(1)
            all_preds.append(pred_prob)  # leak: new:device-accumulation
        os.makedirs(os.path.join(self.output_root, name), exist_ok=True)
        for i, prob in enumerate(all_preds):
            label = prob.argmax(1)[0].byte().cpu().numpy()
            Image.fromarray(label.astype(np.uint8)).save(os.path.join(self.output_root, name, f"{i + 1:05d}.png"))


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    evaluator = Evaluator(AOTEngine().to(device).eval(), "results/")
    for seq in range(30):
        frames = [torch.rand(1, 3, 480, 854, device=device) for _ in range(150)]
        evaluator.evaluate_sequence(f"seq{seq}", frames, torch.rand(1, 11, 480, 854, device=device))
