"""A space-time memory network sums the loss over the frames of one clip and calls backward once

Source: https://github.com/seoungwugoh/STM/issues/14
Style: plain
Kind: negative: losses of every frame summed in a loop, memory kept with gradients within one iteration
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class STM(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.key_enc = nn.Conv2d(3, dim, 3, padding=1)
        self.mem_enc = nn.Conv2d(4, dim, 3, padding=1)
        self.decoder = nn.Conv2d(2 * dim, 1, 3, padding=1)

    def memorize(self, frame, mask):
        return self.mem_enc(torch.cat([frame, mask], 1))

    def segment(self, frame, memories):
        key = self.key_enc(frame)
        read = torch.stack(memories).mean(0)
        return self.decoder(torch.cat([key, read], 1))


def train_step(model, optimizer, frames, masks):
    memories = [model.memorize(frames[:, 0], masks[:, 0])]
    loss = 0.0
    for t in range(1, frames.shape[1]):
        logits = model.segment(frames[:, t], memories)
        loss = loss + F.binary_cross_entropy_with_logits(logits, masks[:, t])
        memories.append(model.memorize(frames[:, t], torch.sigmoid(logits)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


if __name__ == "__main__":
    model = STM()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)
    for it in range(100_000):
        frames = torch.rand(4, 3, 3, 384, 384)
        masks = (torch.rand(4, 3, 1, 384, 384) > 0.5).float()
        loss = train_step(model, optimizer, frames, masks)
        if it % 100 == 0:
            print(it, loss)
