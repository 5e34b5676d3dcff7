"""A vanilla GAN trains D on G(z) without detach; the graph dies with the iteration and grads are zeroed

Source: https://github.com/yunjey/pytorch-tutorial/issues/56
Style: gan
Kind: negative: generator output used by the discriminator step without .detach() (no cross-step retention)
"""
import torch
import torch.nn as nn

latent_size, hidden_size, image_size, batch_size = 64, 256, 784, 100

D = nn.Sequential(nn.Linear(image_size, hidden_size), nn.LeakyReLU(0.2), nn.Linear(hidden_size, hidden_size),
                  nn.LeakyReLU(0.2), nn.Linear(hidden_size, 1), nn.Sigmoid())
G = nn.Sequential(nn.Linear(latent_size, hidden_size), nn.ReLU(), nn.Linear(hidden_size, hidden_size), nn.ReLU(),
                  nn.Linear(hidden_size, image_size), nn.Tanh())
criterion = nn.BCELoss()
d_optimizer = torch.optim.Adam(D.parameters(), lr=2e-4)
g_optimizer = torch.optim.Adam(G.parameters(), lr=2e-4)


def reset_grad():
    d_optimizer.zero_grad()
    g_optimizer.zero_grad()


def train(num_epochs=200, steps_per_epoch=600):
    for epoch in range(num_epochs):
        for i in range(steps_per_epoch):
            images = torch.rand(batch_size, image_size) * 2 - 1
            real_labels, fake_labels = torch.ones(batch_size, 1), torch.zeros(batch_size, 1)
            d_loss_real = criterion(D(images), real_labels)
            fake_images = G(torch.randn(batch_size, latent_size))
            d_loss_fake = criterion(D(fake_images), fake_labels)
            reset_grad()
            (d_loss_real + d_loss_fake).backward()
            d_optimizer.step()
            fake_images = G(torch.randn(batch_size, latent_size))
            g_loss = criterion(D(fake_images), real_labels)
            reset_grad()
            g_loss.backward()
            g_optimizer.step()
            if (i + 1) % 200 == 0:
                print(f"epoch {epoch} step {i + 1}: d_loss {(d_loss_real + d_loss_fake).item():.4f}, g_loss {g_loss.item():.4f}")


if __name__ == "__main__":
    train()
