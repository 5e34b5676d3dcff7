"""A few-shot talking-head GAN calls backward(retain_graph=True) on the generator loss every step

Source: https://github.com/grey-eye/talking-heads/pull/7
Style: gan
Kind: retain_graph=True in the training loop where nothing reuses the graph
"""
import torch
import torch.nn as nn


class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(6, 64, 4, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 512))

    def forward(self, frames, landmarks):
        return self.net(torch.cat([frames, landmarks], 1)).mean(0, keepdim=True)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.film = nn.Linear(512, 64 * 2)
        self.body = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU())
        self.out = nn.Sequential(nn.Conv2d(64, 3, 3, padding=1), nn.Tanh())

    def forward(self, landmarks, e_hat):
        gamma, beta = self.film(e_hat).chunk(2, -1)
        return self.out(self.body(landmarks) * gamma[..., None, None] + beta[..., None, None])


def main(epochs=75, K=8):
    E, G = Embedder(), Generator()
    D = nn.Sequential(nn.Conv2d(6, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 1))
    optimizer_E_G = torch.optim.Adam(list(E.parameters()) + list(G.parameters()), lr=5e-5)
    optimizer_D = torch.optim.Adam(D.parameters(), lr=2e-4)
    for epoch in range(epochs):
        for batch in range(1000):
            frames, landmarks = torch.rand(K, 3, 256, 256), torch.rand(K, 3, 256, 256)
            x_t, y_t = torch.rand(1, 3, 256, 256), torch.rand(1, 3, 256, 256)
            e_hat = E(frames, landmarks)
            x_hat = G(y_t, e_hat)
            r_x_hat = D(torch.cat([x_hat, y_t], 1))
            loss_E_G = -r_x_hat.mean() + 20 * nn.functional.l1_loss(x_hat, x_t)
            optimizer_E_G.zero_grad()
            loss_E_G.backward()
            optimizer_E_G.step()
            r_x = D(torch.cat([x_t, y_t], 1))
            r_x_hat = D(torch.cat([x_hat.detach(), y_t], 1))
            loss_D = torch.relu(1 + r_x_hat).mean() + torch.relu(1 - r_x).mean()
            optimizer_D.zero_grad()
            loss_D.backward()
            optimizer_D.step()


if __name__ == "__main__":
    main()
