"""Feature distillation: the teacher stays in train mode for its BatchNorm statistics but runs under torch.no_grad()

Source: https://github.com/clovaai/overhaul-distillation/issues/34
Style: plain
Kind: negative: a second network's forward in every training step outside model.eval() (guarded by torch.no_grad(); no graph recorded)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def conv_net(width):
    return nn.Sequential(
        nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
        nn.Conv2d(width, 2 * width, 3, stride=2, padding=1), nn.BatchNorm2d(2 * width), nn.ReLU(),
        nn.Conv2d(2 * width, 4 * width, 3, stride=2, padding=1), nn.BatchNorm2d(4 * width), nn.ReLU(),
    )


class Student(nn.Module):
    def __init__(self, teacher_channels=512):
        super().__init__()
        self.features = conv_net(32)
        self.connector = nn.Sequential(nn.Conv2d(128, teacher_channels, 1), nn.BatchNorm2d(teacher_channels))
        self.head = nn.Linear(128, 100)

    def forward(self, x):
        f = self.features(x)
        return self.connector(f), self.head(f.mean((2, 3)))


def distillation_loss(student_feat, teacher_feat):
    return F.mse_loss(student_feat, torch.max(teacher_feat, torch.zeros_like(teacher_feat)), reduction="sum") / len(student_feat)


def main(epochs=200, device="cuda" if torch.cuda.is_available() else "cpu"):
    teacher = conv_net(128).to(device)
    student = Student().to(device)
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    loader = DataLoader(TensorDataset(torch.rand(50_000, 3, 32, 32), torch.randint(0, 100, (50_000,))), batch_size=128, shuffle=True)
    for epoch in range(epochs):
        student.train()
        teacher.train()
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            with torch.no_grad():
                teacher_feat = teacher(images)
            student_feat, logits = student(images)
            loss = F.cross_entropy(logits, labels) + 1e-4 * distillation_loss(student_feat, teacher_feat)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: last loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
