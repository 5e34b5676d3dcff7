"""A WGAN-GP critic builds its gradient penalty with backward(create_graph=True) on the mixed images

Source: https://github.com/akanimax/pro_gan_pytorch/pull/12
Style: gan
Kind: backward(create_graph=True) makes parameter .grad reference the graph (a cycle that is never freed)
Runnable from: bench/leaks/cases/gan_gradient_penalty_backward_create_graph
"""
import torch
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 16, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(16, 32, 4, 2, 1), nn.LeakyReLU(0.2),
                                 nn.Flatten(), nn.Linear(32 * 4 * 4, 1))

    def forward(self, x):
        return self.net(x)


class WGAN_GP:
    def __init__(self, dis, drift=0.001, use_gp=True):
        self.dis = dis
        self.drift = drift
        self.use_gp = use_gp

    def __gradient_penalty(self, real_samps, fake_samps, reg_lambda=10):
        epsilon = torch.rand(real_samps.shape[0], 1, 1, 1)
        merged = (epsilon * real_samps + (1 - epsilon) * fake_samps).requires_grad_(True)
        op = self.dis(merged)
        gradient = torch.autograd.grad(outputs=op, inputs=merged, grad_outputs=torch.ones_like(op),
                                       create_graph=True, retain_graph=True, only_inputs=True)[0]
        gradient = gradient.view(gradient.shape[0], -1)
        return reg_lambda * ((gradient.norm(p=2, dim=1) - 1) ** 2).mean()

    def dis_loss(self, real_samps, fake_samps):
        real_out = self.dis(real_samps)
        fake_out = self.dis(fake_samps)
        loss = fake_out.mean() - real_out.mean() + self.drift * (real_out ** 2).mean()
        if self.use_gp:
            loss = loss + self.__gradient_penalty(real_samps, fake_samps)
        return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    critic = Critic()
    gen = nn.Sequential(nn.Linear(32, 3 * 16 * 16), nn.Tanh())
    optimizer = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.99))
    loss_fn = WGAN_GP(critic)
    for step in range(200):
        real = torch.rand(16, 3, 16, 16) * 2 - 1
        fake = gen(torch.randn(16, 32)).view(16, 3, 16, 16).detach()
        optimizer.zero_grad()
        loss = loss_fn.dis_loss(real, fake)
        loss.backward()
        optimizer.step()
