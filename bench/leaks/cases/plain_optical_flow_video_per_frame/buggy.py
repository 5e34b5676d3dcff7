"""Optical flow over a long video runs every frame pair through a helper with autograd recording

Source: https://github.com/msu-video-group/memfof/issues/5
Style: plain
Kind: a function called once per frame from another function's loop, no inference mode
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class FlowNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(6, 64, 7, 2, 3), nn.ReLU(), nn.Conv2d(64, 128, 5, 2, 2), nn.ReLU(),
                                     nn.Conv2d(128, 256, 3, 2, 1), nn.ReLU())
        self.predict = nn.Conv2d(256, 2, 3, padding=1)

    def forward(self, frame_a, frame_b):
        flow = self.predict(self.encoder(torch.cat([frame_a, frame_b], dim=1)))
        return F.interpolate(flow, size=frame_a.shape[-2:], mode="bilinear", align_corners=False) * 8


def estimate_pair(model, prev, curr, device):
    prev = prev.to(device, non_blocking=True).unsqueeze(0)
    curr = curr.to(device, non_blocking=True).unsqueeze(0)
    flow = model(prev, curr)  # leak: LL201
    return flow.squeeze(0).cpu().half()


def read_frames(n, height, width):
    for _ in range(n):
        yield torch.rand(3, height, width)


def process_video(model, n_frames, height, width, device):
    model.eval()
    flows = []
    prev = None
    for frame in read_frames(n_frames, height, width):
        if prev is not None:
            flows.append(estimate_pair(model, prev, frame, device))
        prev = frame
    return flows


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--height", type=int, default=1080)
    parser.add_argument("--width", type=int, default=1920)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    net = FlowNet().to(device)
    flows = process_video(net, args.frames, args.height, args.width, device)
    torch.save(flows, "flows.pt")
