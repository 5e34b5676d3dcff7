"""Per-frame feature extraction through helpers collects graph-attached features for a whole video

Source: https://github.com/facebookresearch/detectron2/issues/1514
Style: plain
Kind: per-frame work in a helper called from another function's loop (no no_grad anywhere)
"""
import glob
import os

import torch
import torch.nn as nn
import torchvision.transforms.functional as TF
from PIL import Image


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3), nn.ReLU(), nn.Conv2d(64, 256, 3, 2, 1), nn.ReLU())
        self.box_head = nn.Conv2d(256, 4 + 1, 1)

    def forward(self, image):
        features = self.backbone(image)
        raw = self.box_head(features)
        return raw[:, :4], raw[:, 4].sigmoid(), features


def from_path_get_all(model, path, device):
    image = TF.to_tensor(Image.open(path).convert("RGB")).unsqueeze(0).to(device)
    boxes, scores, features = model(image)
    return image, boxes, scores, features


def pooled_feature_list(boxes, scores, features, threshold=0.5):
    keep = scores > threshold
    pooled = (features * keep.unsqueeze(1)).flatten(2).mean(-1)
    return [pooled, boxes.flatten(2).mean(-1)]


def process_video(model, frame_dir, device):
    all_features = []
    for path in sorted(glob.glob(os.path.join(frame_dir, "*.jpg"))):
        with torch.no_grad():
            image, boxes, scores, features = from_path_get_all(model, path, device)
            all_features.append(pooled_feature_list(boxes, scores, features))
    return all_features


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = Detector().to(device)
    model.load_state_dict(torch.load("detector.pt", map_location=device))
    model.eval()
    feats = process_video(model, "frames/", device)
    torch.save([[t.cpu() for t in f] for f in feats], "video_features.pt")
