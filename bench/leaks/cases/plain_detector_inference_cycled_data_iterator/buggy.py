"""Particle-detector reconstruction: the inference driver pulls batches from itertools.cycle over the data loader

Source: https://github.com/DeepLearnPhysics/lartpc_mlreco3d/pull/77
Style: plain
Kind: every batch cached for the whole run: the inference path wraps the loader in `itertools.cycle`, which keeps each yielded batch (large sparse voxel tensors) to replay it later, so host memory grows linearly with the number of iterations; the training path uses a generator that re-iterates the loader and does not grow
"""
import itertools

import numpy as np
import torch
from torch.utils.data import DataLoader


class Handlers:
    """Bundle of the objects the driver needs (the project keeps them on one namespace)."""

    def __init__(self, net, loader):
        self.net = net
        self.data_io = loader
        self.data_io_iter = None


def cycle(loader):
    while True:
        for batch in loader:
            yield batch


def prepare(net, dataset, batch_size, train):
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=train, num_workers=4,
                        collate_fn=lambda items: {k: [it[k] for it in items] for k in items[0]})
    handlers = Handlers(net, loader)
    if train:
        handlers.data_io_iter = iter(cycle(handlers.data_io))
    else:
        handlers.data_io_iter = itertools.cycle(handlers.data_io)  # leak: new:cache-growth
    return handlers


def to_device(blob, device):
    voxels = [torch.as_tensor(v, dtype=torch.float32, device=device) for v in blob["voxels"]]
    return voxels, blob["event_id"]


def inference(net, dataset, iterations, device="cuda", batch_size=16, out="reco.npz"):
    handlers = prepare(net, dataset, batch_size, train=False)
    handlers.net.to(device).eval()
    results = {}
    with torch.no_grad():
        for it in range(iterations):
            blob = next(handlers.data_io_iter)
            voxels, event_ids = to_device(blob, device)
            for vox, eid in zip(voxels, event_ids):
                segmentation = handlers.net(vox).argmax(-1)
                results[int(eid)] = np.bincount(segmentation.cpu().numpy(), minlength=5)
            if it % 100 == 0:
                print(f"iteration {it}: {len(results)} events reconstructed")
    np.savez(out, ids=np.array(list(results)), counts=np.stack(list(results.values())))
    return results
