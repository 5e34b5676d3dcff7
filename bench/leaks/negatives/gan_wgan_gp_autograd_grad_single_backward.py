"""A WGAN-GP critic computes its penalty with autograd.grad(create_graph=True) and one backward per step

Source: https://github.com/KupynOrest/DeblurGAN/issues/15
Style: gan
Kind: negative: a gradient penalty with create_graph=True (through autograd.grad, no backward(create_graph))
"""
import torch
import torch.nn as nn


def gradient_penalty(critic, real, fake, lambda_gp=10.0):
    alpha = torch.rand(real.size(0), 1, 1, 1, device=real.device)
    interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_interpolates = critic(interpolates)
    gradients = torch.autograd.grad(outputs=d_interpolates, inputs=interpolates, grad_outputs=torch.ones_like(d_interpolates),
                                    create_graph=True, retain_graph=True, only_inputs=True)[0]
    gradients = gradients.view(gradients.size(0), -1)
    return lambda_gp * ((gradients.norm(2, dim=1) - 1) ** 2).mean()


def main(iterations=100_000, critic_iters=5):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    critic = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(64, 128, 4, 2, 1), nn.LeakyReLU(0.2),
                           nn.Flatten(), nn.Linear(128 * 16 * 16, 1)).to(device)
    gen = nn.Sequential(nn.Linear(128, 3 * 64 * 64), nn.Tanh()).to(device)
    opt_c = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.5, 0.9))
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4, betas=(0.5, 0.9))
    for it in range(iterations):
        for _ in range(critic_iters):
            real = torch.rand(64, 3, 64, 64, device=device) * 2 - 1
            fake = gen(torch.randn(64, 128, device=device)).view(64, 3, 64, 64).detach()
            loss_c = critic(fake).mean() - critic(real).mean() + gradient_penalty(critic, real, fake)
            opt_c.zero_grad()
            loss_c.backward()
            opt_c.step()
        loss_g = -critic(gen(torch.randn(64, 128, device=device)).view(64, 3, 64, 64)).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()


if __name__ == "__main__":
    main()
