"""A video segmentation predictor caches every frame's features and masks on the GPU

Source: https://github.com/facebookresearch/sam2/issues/456
Style: plain
Kind: a dict cache on self grows with every new frame
Runnable from: bench/leaks/cases/plain_video_segmentation_per_frame_cache
Run: --step __main__:VideoPredictor.propagate
"""
import torch
import torch.nn as nn


class MemorySegmenter(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.image_encoder = nn.Sequential(nn.Conv2d(3, dim, 8, 8), nn.GELU())
        self.mask_decoder = nn.Conv2d(2 * dim, 1, 1)
        self.memory_encoder = nn.Conv2d(dim + 1, dim, 1)


class VideoPredictor:
    def __init__(self, model):
        self.model = model.eval()
        self.frame_cache = {}

    @torch.inference_mode()
    def propagate(self, frames, num_memory=7):
        for idx, frame in enumerate(frames):
            feats = self.model.image_encoder(frame.unsqueeze(0))
            recent = [self.frame_cache[i]["memory"] for i in range(max(0, idx - num_memory), idx)]
            memory = torch.stack(recent).mean(0) if recent else torch.zeros_like(feats)
            mask_logits = self.model.mask_decoder(torch.cat([feats, memory], dim=1))
            new_memory = self.model.memory_encoder(torch.cat([feats, mask_logits.sigmoid()], dim=1))
            self.frame_cache[idx] = {"memory": new_memory}
            self.frame_cache.pop(idx - num_memory, None)
            yield idx, (mask_logits > 0).squeeze().cpu()


def video_frames(n, height=64, width=64):
    for _ in range(n):
        yield torch.rand(3, height, width)


if __name__ == "__main__":
    torch.manual_seed(0)
    predictor = VideoPredictor(MemorySegmenter())
    areas = []
    for idx, mask in predictor.propagate(video_frames(200)):
        areas.append(mask.float().mean().item())
    print(len(areas), sum(areas) / len(areas))
