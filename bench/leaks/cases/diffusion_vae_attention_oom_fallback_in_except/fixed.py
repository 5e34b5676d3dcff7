"""Decoding large latents: the VAE attention falls back to sliced attention from inside the except clause of an OOM

Source: https://github.com/Comfy-Org/ComfyUI/pull/11038
Style: diffusion
Kind: retry inside the except clause for out-of-memory errors: while the handler runs, the exception's traceback keeps the failed attempt's frames and tensors alive, so the sliced-attention fallback runs with that memory still allocated and often runs out of memory again
"""
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("vae")


def sliced_attention(q, k, v, slice_size=1024):
    """q: [b, hw, c], k: [b, c, hw], v: [b, c, hw] -> [b, c, hw], one block of queries at a time."""
    out = torch.empty_like(v)
    scale = q.shape[-1] ** -0.5
    for start in range(0, q.shape[1], slice_size):
        scores = torch.bmm(q[:, start:start + slice_size], k) * scale
        probs = scores.softmax(dim=2).permute(0, 2, 1)
        out[:, :, start:start + slice_size] = torch.bmm(v, probs)
        del scores, probs
    return out


def vae_attention(q, k, v):
    b, c, h, w = q.shape
    q, k, v = (t.view(b, 1, c, h * w).transpose(2, 3).contiguous() for t in (q, k, v))
    oom = False
    try:
        out = F.scaled_dot_product_attention(q, k, v)
        out = out.transpose(2, 3).reshape(b, c, h, w)
    except torch.cuda.OutOfMemoryError:
        # only set a flag: the exception (and the frames it references) is released once the handler exits
        oom = True
    if oom:
        log.warning("scaled_dot_product_attention ran out of memory: switching to sliced attention")
        out = sliced_attention(q.view(b, -1, c), k.view(b, -1, c).transpose(1, 2), v.view(b, -1, c).transpose(1, 2)).reshape(b, c, h, w)
    return out


class AttnBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.GroupNorm(32, channels, eps=1e-6)
        self.q, self.k, self.v = (nn.Conv2d(channels, channels, 1) for _ in range(3))
        self.proj_out = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        h = self.norm(x)
        return x + self.proj_out(vae_attention(self.q(h), self.k(h), self.v(h)))


class ResBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.block = nn.Sequential(nn.GroupNorm(32, channels), nn.SiLU(), nn.Conv2d(channels, channels, 3, padding=1),
                                   nn.GroupNorm(32, channels), nn.SiLU(), nn.Conv2d(channels, channels, 3, padding=1))

    def forward(self, x):
        return x + self.block(x)


class Decoder(nn.Module):
    def __init__(self, latent_channels=4, channels=512, ups=3):
        super().__init__()
        self.conv_in = nn.Conv2d(latent_channels, channels, 3, padding=1)
        self.mid = nn.Sequential(ResBlock(channels), AttnBlock(channels), ResBlock(channels))
        layers = []
        for _ in range(ups):
            layers += [ResBlock(channels), nn.Upsample(scale_factor=2.0, mode="nearest"), nn.Conv2d(channels, channels, 3, padding=1)]
        self.up = nn.Sequential(*layers)
        self.conv_out = nn.Sequential(nn.GroupNorm(32, channels), nn.SiLU(), nn.Conv2d(channels, 3, 3, padding=1))

    def forward(self, z):
        return self.conv_out(self.up(self.mid(self.conv_in(z))))


@torch.inference_mode()
def decode_batch(decoder, latents, scaling_factor=0.18215):
    images = decoder(latents / scaling_factor)
    return ((images.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8).cpu()


def main(latent_files, out_dir="renders"):
    device = "cuda"
    decoder = Decoder().to(device, torch.float16).eval()
    decoder.load_state_dict(torch.load("vae_decoder.pt", map_location=device))
    for path in latent_files:
        latents = torch.load(path, map_location=device).to(torch.float16)  # e.g. [1, 4, 256, 256] for a 2048px image
        images = decode_batch(decoder, latents)
        torch.save(images, f"{out_dir}/{path.rsplit('/', 1)[-1]}")
        log.info("decoded %s -> %s", path, tuple(images.shape))
