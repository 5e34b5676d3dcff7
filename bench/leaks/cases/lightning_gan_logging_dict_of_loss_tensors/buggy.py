"""A LightningModule GAN appends every step's loss tensors to lists in self.logging_dict; OOM after a few epochs

Source: https://github.com/Lightning-AI/pytorch-lightning/issues/8457
Style: lightning
Kind: graph kept across steps in dicts of lists on self (loss tensors stored on the GPU with their graphs)
"""
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Encoder(nn.Module):
    def __init__(self, x_dim=64, z_dim=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(x_dim, 256), nn.LeakyReLU(0.2), nn.Linear(256, z_dim))

    def forward(self, x):
        return self.net(x)


class AdversarialAutoencoder(pl.LightningModule):
    def __init__(self, x_dim=64, z_dim=8, lr=2e-4):
        super().__init__()
        self.save_hyperparameters()
        self.encoder = Encoder(x_dim, z_dim)
        self.decoder = nn.Sequential(nn.Linear(z_dim, 256), nn.LeakyReLU(0.2), nn.Linear(256, x_dim))
        self.critic = nn.Sequential(nn.Linear(z_dim, 128), nn.LeakyReLU(0.2), nn.Linear(128, 1))
        self.logging_dict = {"g_loss": [], "g_adv_loss": [], "data_loss": [], "d_loss": []}

    def training_step(self, batch, batch_idx, optimizer_idx):
        (x,) = batch
        z = self.encoder(x)
        if optimizer_idx == 0:
            data_loss = F.mse_loss(self.decoder(z), x)
            g_adv_loss = F.binary_cross_entropy_with_logits(self.critic(z), torch.ones(len(x), 1, device=x.device))
            g_loss = data_loss + 0.1 * g_adv_loss
            self.logging_dict["g_loss"].append(g_loss)  # leak: LL102
            self.logging_dict["g_adv_loss"].append(g_adv_loss)  # leak: LL102
            self.logging_dict["data_loss"].append(data_loss)  # leak: LL102
            return g_loss
        prior = torch.randn_like(z)
        real = F.binary_cross_entropy_with_logits(self.critic(prior), torch.ones(len(x), 1, device=x.device))
        fake = F.binary_cross_entropy_with_logits(self.critic(z.detach()), torch.zeros(len(x), 1, device=x.device))
        d_loss = 0.5 * (real + fake)
        self.logging_dict["d_loss"].append(d_loss)  # leak: LL102
        return d_loss

    def on_train_epoch_end(self):
        for name, values in self.logging_dict.items():
            if values:
                self.log(f"epoch/{name}", torch.stack(values).mean())

    def configure_optimizers(self):
        g_params = list(self.encoder.parameters()) + list(self.decoder.parameters())
        return [torch.optim.Adam(g_params, lr=self.hparams.lr), torch.optim.Adam(self.critic.parameters(), lr=self.hparams.lr)]


if __name__ == "__main__":
    data = TensorDataset(torch.randn(200_000, 64))
    trainer = pl.Trainer(max_epochs=100, accelerator="gpu", devices=1)
    trainer.fit(AdversarialAutoencoder(), DataLoader(data, batch_size=256, shuffle=True))
