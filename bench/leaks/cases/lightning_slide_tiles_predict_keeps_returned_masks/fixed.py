"""Whole-slide tile segmentation: predictions are written to disk by a callback, but Trainer.predict also keeps every returned batch

Source: https://github.com/NKI-AI/ahcore/pull/37
Source: https://github.com/kaiko-ai/eva/issues/172
Style: lightning
Kind: device memory grows without a graph: predict_step returns the GPU probability maps so the writer callback can save them, and trainer.predict (return_predictions defaults to True) also appends every batch's output to the list it returns; over a slide of tens of thousands of tiles the predict loop runs out of memory
"""
import os

import lightning.pytorch as pl
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch.callbacks import BasePredictionWriter
from torch.utils.data import DataLoader, Dataset

TILE = 512
N_CLASSES = 4


class SlideTiles(Dataset):
    def __init__(self, n_tiles, seed=0):
        self.rng = np.random.default_rng(seed)
        self.coords = self.rng.integers(0, 100_000, (n_tiles, 2))

    def __len__(self):
        return len(self.coords)

    def __getitem__(self, i):
        tile = torch.from_numpy(self.rng.random((3, TILE, TILE), dtype=np.float32))
        return {"image": tile, "coords": torch.from_numpy(self.coords[i])}


class TissueSegmenter(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Conv2d(64, N_CLASSES, 1)

    def forward(self, x):
        logits = self.head(self.encoder(x))
        return F.interpolate(logits, size=x.shape[-2:], mode="bilinear", align_corners=False)

    def predict_step(self, batch, batch_idx):
        probs = torch.softmax(self(batch["image"]), dim=1)
        return {"probs": probs, "coords": batch["coords"]}


class TileMaskWriter(BasePredictionWriter):
    def __init__(self, out_dir):
        super().__init__(write_interval="batch")
        self.out_dir = out_dir
        os.makedirs(out_dir, exist_ok=True)

    def write_on_batch_end(self, trainer, pl_module, prediction, batch_indices, batch, batch_idx, dataloader_idx=0):
        masks = prediction["probs"].argmax(1).to(torch.uint8).cpu().numpy()
        coords = prediction["coords"].cpu().numpy()
        np.savez_compressed(os.path.join(self.out_dir, f"batch_{batch_idx:06d}.npz"), masks=masks, coords=coords)


def main():
    tiles = DataLoader(SlideTiles(40_000), batch_size=32, num_workers=4)
    model = TissueSegmenter()
    trainer = pl.Trainer(accelerator="auto", devices=1, callbacks=[TileMaskWriter("outputs/slide_0001")],
                         logger=False, enable_checkpointing=False)
    # the writer already saves every batch: do not also keep them all for a return value
    trainer.predict(model, dataloaders=tiles, return_predictions=False)
    print("slide written")


if __name__ == "__main__":
    main()
