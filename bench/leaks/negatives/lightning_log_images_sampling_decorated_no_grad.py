"""An image-logging callback samples with a DDIM sampler inside methods decorated with @torch.no_grad()

Source: https://github.com/lllyasviel/ControlNet/issues/294
Style: lightning
Kind: negative: periodic sampling inside the training loop, under no_grad decorators
"""
import pytorch_lightning as pl
import torch
import torch.nn as nn


class ControlLDM(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.unet = nn.Sequential(nn.Conv2d(8, 320, 3, padding=1), nn.SiLU(), nn.Conv2d(320, 4, 3, padding=1))
        self.register_buffer("alphas_bar", torch.cumprod(1 - torch.linspace(1e-4, 0.02, 1000), 0))

    def apply_model(self, x, hint, t):
        return self.unet(torch.cat([x, hint], 1))

    def training_step(self, batch, batch_idx):
        latents, hint = batch
        t = torch.randint(0, 1000, (latents.shape[0],), device=self.device)
        noise = torch.randn_like(latents)
        a = self.alphas_bar[t].view(-1, 1, 1, 1)
        return nn.functional.mse_loss(self.apply_model(a.sqrt() * latents + (1 - a).sqrt() * noise, hint, t), noise)

    @torch.no_grad()
    def sample_log(self, hint, ddim_steps=50):
        x = torch.randn(hint.shape[0], 4, *hint.shape[-2:], device=self.device)
        for t in torch.linspace(999, 0, ddim_steps).long():
            eps = self.apply_model(x, hint, t)
            a = self.alphas_bar[t]
            x = a.sqrt() * (x - (1 - a).sqrt() * eps) / a.sqrt()
        return x

    @torch.no_grad()
    def log_images(self, batch, N=4):
        _, hint = batch
        return {"samples": self.sample_log(hint[:N])}

    def configure_optimizers(self):
        return torch.optim.AdamW(self.unet.parameters(), lr=1e-5)


class ImageLogger(pl.Callback):
    def __init__(self, batch_frequency=300):
        self.batch_frequency = batch_frequency

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if batch_idx % self.batch_frequency == 0:
            images = pl_module.log_images(batch)
            trainer.logger.experiment.add_images("samples", images["samples"][:, :3].clamp(-1, 1) * 0.5 + 0.5, trainer.global_step)


if __name__ == "__main__":
    data = torch.utils.data.TensorDataset(torch.randn(5000, 4, 64, 64), torch.randn(5000, 4, 64, 64))
    trainer = pl.Trainer(max_epochs=10, callbacks=[ImageLogger()], accumulate_grad_batches=4)
    trainer.fit(ControlLDM(), torch.utils.data.DataLoader(data, batch_size=1, shuffle=True))
