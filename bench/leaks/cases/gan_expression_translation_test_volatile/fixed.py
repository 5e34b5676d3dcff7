"""Facial-expression GAN test script written for volatile Variables: every translation runs with autograd on

Source: https://github.com/adam9500370/Facial-Expression-Generation/issues/2
Style: gan
Kind: evaluation forward records a graph nobody uses: Variable(volatile=True) no longer disables autograd, so each of the seven generator passes per test batch keeps its activations (the translated images are also held in a list until the grid is saved) and testing runs out of GPU memory
"""
import os

import torch
import torch.nn as nn
from torch.autograd import Variable
from torchvision.utils import save_image

EXPRESSIONS = ["Angry", "Disgust", "Fear", "Happy", "Neutral", "Sad", "Surprise"]
IMAGE_SIZE = 64


class ResidualBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(dim, dim, 3, padding=1, bias=False), nn.InstanceNorm2d(dim, affine=True), nn.ReLU(inplace=True),
            nn.Conv2d(dim, dim, 3, padding=1, bias=False), nn.InstanceNorm2d(dim, affine=True),
        )

    def forward(self, x):
        return x + self.main(x)


class Generator(nn.Module):
    def __init__(self, conv_dim=64, c_dim=len(EXPRESSIONS), repeat_num=6):
        super().__init__()
        layers = [nn.Conv2d(1 + c_dim, conv_dim, 7, padding=3, bias=False), nn.InstanceNorm2d(conv_dim, affine=True), nn.ReLU(inplace=True)]
        for _ in range(2):
            layers += [nn.Conv2d(conv_dim, conv_dim * 2, 4, stride=2, padding=1, bias=False), nn.InstanceNorm2d(conv_dim * 2, affine=True), nn.ReLU(inplace=True)]
            conv_dim *= 2
        layers += [ResidualBlock(conv_dim) for _ in range(repeat_num)]
        for _ in range(2):
            layers += [nn.ConvTranspose2d(conv_dim, conv_dim // 2, 4, stride=2, padding=1, bias=False), nn.InstanceNorm2d(conv_dim // 2, affine=True), nn.ReLU(inplace=True)]
            conv_dim //= 2
        layers += [nn.Conv2d(conv_dim, 1, 7, padding=3), nn.Tanh()]
        self.main = nn.Sequential(*layers)

    def forward(self, x, c):
        c = c.view(c.size(0), c.size(1), 1, 1).expand(-1, -1, x.size(2), x.size(3))
        return self.main(torch.cat([x, c], dim=1))


def to_var(x, volatile=False):
    if torch.cuda.is_available():
        x = x.cuda()
    return Variable(x, volatile=volatile)


def one_hot(labels, dim):
    out = torch.zeros(labels.size(0), dim)
    out[torch.arange(labels.size(0)), labels.long()] = 1
    return out


def denorm(x):
    return ((x + 1) / 2).clamp(0, 1)


@torch.no_grad()
def test(G, data_loader, result_path):
    G.eval()
    for name in EXPRESSIONS:
        os.makedirs(os.path.join(result_path, "test", name), exist_ok=True)
    for i, (real_x, _) in enumerate(data_loader):
        real_x = to_var(real_x, volatile=True)
        target_c_list = [to_var(one_hot(torch.ones(real_x.size(0)) * j, len(EXPRESSIONS)), volatile=True)
                         for j in range(len(EXPRESSIONS))]
        fake_image_list = [real_x]
        for j, target_c in enumerate(target_c_list):
            fake_x = G(real_x, target_c)
            fake_image_list.append(fake_x)
            for k in range(real_x.size(0)):
                index = i * real_x.size(0) + k
                save_image(denorm(fake_x.data[k]), os.path.join(result_path, "test", EXPRESSIONS[j], f"{index}_fake.png"))
        fake_images = torch.cat(fake_image_list, dim=3)
        save_image(denorm(fake_images.data), os.path.join(result_path, f"{i + 1}_fake.png"), nrow=1, padding=0)
        print(f'Translated test images and saved into "{result_path}/{i + 1}_fake.png"')


if __name__ == "__main__":
    generator = Generator()
    if torch.cuda.is_available():
        generator = generator.cuda()
    faces = torch.rand(3589, 1, IMAGE_SIZE, IMAGE_SIZE) * 2 - 1
    labels = torch.randint(0, len(EXPRESSIONS), (3589,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(faces, labels), batch_size=16)
    test(generator, loader, "results/fer2013")
