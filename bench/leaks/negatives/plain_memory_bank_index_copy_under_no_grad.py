"""Contrastive distillation with a feature memory bank: the bank on the module is written in place every step, inside torch.no_grad

Source: https://github.com/HobbitLong/RepDistiller/issues/37
Style: plain
Kind: negative: resembles in-place writes of graph-attached features into a state on self (a memory-bank buffer updated with index_copy_ every step and read back by the next one); the update runs under torch.no_grad, so the bank never records any step's graph
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

FEAT_DIM = 128
N_NEGATIVES = 4096


class MemoryBankContrast(nn.Module):
    def __init__(self, n_data, dim=FEAT_DIM, temperature=0.07, momentum=0.5):
        super().__init__()
        self.temperature, self.momentum = temperature, momentum
        bank = torch.randn(n_data, dim)
        self.register_buffer("bank_student", F.normalize(bank, dim=1))
        self.register_buffer("bank_teacher", F.normalize(bank.clone(), dim=1))

    def forward(self, f_student, f_teacher, idx):
        f_student, f_teacher = F.normalize(f_student, dim=1), F.normalize(f_teacher, dim=1)
        negatives = torch.randint(0, self.bank_student.shape[0], (len(idx), N_NEGATIVES), device=idx.device)
        negatives[:, 0] = idx
        w_teacher = self.bank_teacher[negatives]
        w_student = self.bank_student[negatives]
        logits_s = torch.bmm(w_teacher, f_student.unsqueeze(2)).squeeze(2) / self.temperature
        logits_t = torch.bmm(w_student, f_teacher.unsqueeze(2)).squeeze(2) / self.temperature
        target = torch.zeros(len(idx), dtype=torch.long, device=idx.device)
        loss = F.cross_entropy(logits_s, target) + F.cross_entropy(logits_t, target)

        with torch.no_grad():
            for bank, feats in ((self.bank_student, f_student), (self.bank_teacher, f_teacher)):
                pos = bank.index_select(0, idx)
                pos.mul_(self.momentum).add_(feats * (1 - self.momentum))
                bank.index_copy_(0, idx, F.normalize(pos, dim=1))
        return loss


def main(n_data=50000, steps=10000, batch=128):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    student = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, FEAT_DIM)).to(device)
    teacher = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, FEAT_DIM)).to(device).eval()
    criterion = MemoryBankContrast(n_data).to(device)
    opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
    inputs = torch.randn(n_data, 512)
    for step in range(steps):
        idx = torch.randint(0, n_data, (batch,))
        x = inputs[idx].to(device)
        with torch.no_grad():
            f_t = teacher(x)
        loss = criterion(student(x), f_t, idx.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 500 == 0:
            print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
