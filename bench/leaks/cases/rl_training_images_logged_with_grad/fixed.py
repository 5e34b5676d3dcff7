"""An RL framework's log callback receives reconstructed observation images that still carry their graph

Source: https://github.com/EmbarkStudios/emote/pull/122
Style: rl
Kind: graph tensors handed to a logger (images kept in the logger's buffer)
"""
import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter


class LoggingMixin:
    """Collects scalars and images during training; a writer callback flushes them every N steps."""

    def __init__(self):
        self.scalar_logs = {}
        self.image_logs = {}

    def log_scalar(self, key, value):
        self.scalar_logs[key] = value.detach() if isinstance(value, torch.Tensor) else value

    def log_image(self, key, value):
        self.image_logs[key] = value.detach()


class WorldModelLoss(LoggingMixin):
    def __init__(self, encoder, decoder, optimizer):
        super().__init__()
        self.encoder, self.decoder, self.optimizer = encoder, decoder, optimizer

    def backward(self, observations):
        latent = self.encoder(observations)
        recon = self.decoder(latent)
        loss = nn.functional.mse_loss(recon, observations)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.log_scalar("loss/reconstruction", loss)
        self.log_image("images/reconstruction", recon[:4])


class TensorboardLogger:
    def __init__(self, callbacks, writer, log_every=1000):
        self.callbacks, self.writer, self.log_every = callbacks, writer, log_every

    def end_batch(self, step):
        if step % self.log_every:
            return
        for cb in self.callbacks:
            for key, value in cb.scalar_logs.items():
                self.writer.add_scalar(key, value, step)
            for key, value in cb.image_logs.items():
                self.writer.add_images(key, value.clamp(0, 1), step)


if __name__ == "__main__":
    encoder = nn.Sequential(nn.Conv2d(3, 32, 4, 2, 1), nn.ReLU(), nn.Conv2d(32, 64, 4, 2, 1))
    decoder = nn.Sequential(nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(32, 3, 4, 2, 1), nn.Sigmoid())
    loss_cb = WorldModelLoss(encoder, decoder, torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=3e-4))
    logger = TensorboardLogger([loss_cb], SummaryWriter("runs/world-model"))
    for step in range(500_000):
        loss_cb.backward(torch.rand(32, 3, 64, 64))
        logger.end_batch(step)
