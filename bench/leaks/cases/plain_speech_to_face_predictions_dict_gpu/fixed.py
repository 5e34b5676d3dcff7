"""An audio-to-face demo keeps every file's predicted vertex sequence on the GPU in a results dict

Source: https://github.com/X-niper/UniTalker/pull/7
Style: plain
Kind: device memory grows without a graph: outputs kept on the GPU over a whole inference run
"""
import glob
import os
import pickle

import torch
import torch.nn as nn


class AudioToFace(nn.Module):
    def __init__(self, audio_dim=768, vertices=5023 * 3, datasets=("vocaset", "biwi", "meshtalk")):
        super().__init__()
        self.encoder = nn.GRU(audio_dim, 512, batch_first=True)
        self.heads = nn.ModuleDict({name: nn.Linear(512, vertices) for name in datasets})

    def forward(self, audio_feats, dataset_name):
        h, _ = self.encoder(audio_feats)
        return self.heads[dataset_name](h)


def load_audio_features(path, device):
    frames = max(30, os.path.getsize(path) // 4000)
    return torch.randn(1, frames, 768, device=device)


@torch.no_grad()
def run_demo(model, wav_dir, dataset_names, device):
    model.eval()
    out_dict = {}
    for wav_f in sorted(glob.glob(os.path.join(wav_dir, "*.wav"))):
        feats = load_audio_features(wav_f, device)
        out_dict[wav_f] = {}
        for dataset_name in dataset_names:
            out = model(feats, dataset_name)
            out_dict[wav_f][dataset_name] = out.cpu()
    return out_dict


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = AudioToFace().to(device)
    results = run_demo(model, "test_audios/", ["vocaset", "biwi", "meshtalk"], device)
    with open("results.pkl", "wb") as handle:
        pickle.dump({k: {d: v.numpy() for d, v in per.items()} for k, per in results.items()}, handle)
