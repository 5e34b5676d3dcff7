"""A machine-learned particle-flow transformer runs its validation pass under accelerate without no_grad

Source: https://github.com/jpata/particleflow/pull/290
Style: accelerate
Kind: evaluation forward records a graph nobody uses: the validation loop calls the model with autograd on, so each validation batch holds a full training-size graph (attention over thousands of detector elements); larger validation batch sizes run out of memory
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, Dataset

N_FEATS, N_CLASSES = 17, 8


class EventDataset(Dataset):
    def __init__(self, n_events, max_elems=4096, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.sizes = torch.randint(500, max_elems, (n_events,), generator=g)
        self.seed = seed

    def __len__(self):
        return len(self.sizes)

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed * 100_003 + i)
        n = int(self.sizes[i])
        x = torch.randn(n, N_FEATS, generator=g)
        cls = torch.randint(0, N_CLASSES, (n,), generator=g)
        reg = torch.randn(n, 4, generator=g)
        return x, cls, reg


def pad_collate(batch):
    n = max(x.shape[0] for x, _, _ in batch)
    xs = torch.zeros(len(batch), n, N_FEATS)
    cls = torch.full((len(batch), n), -1, dtype=torch.long)
    reg = torch.zeros(len(batch), n, 4)
    for i, (x, c, r) in enumerate(batch):
        xs[i, : len(x)], cls[i, : len(c)], reg[i, : len(r)] = x, c, r
    return xs, cls, reg


class ParticleFlowNet(nn.Module):
    def __init__(self, dim=256, depth=6):
        super().__init__()
        self.inp = nn.Linear(N_FEATS, dim)
        layer = nn.TransformerEncoderLayer(dim, 8, 4 * dim, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, depth)
        self.cls_head = nn.Linear(dim, N_CLASSES)
        self.reg_head = nn.Linear(dim, 4)

    def forward(self, x, pad_mask):
        h = self.enc(self.inp(x), src_key_padding_mask=pad_mask)
        return self.cls_head(h), self.reg_head(h)


def pf_loss(model, batch):
    x, cls, reg = batch
    mask = cls < 0
    logits, pred = model(x, mask)
    loss_cls = F.cross_entropy(logits.transpose(1, 2), cls, ignore_index=-1)
    loss_reg = F.mse_loss(pred[~mask], reg[~mask])
    return loss_cls + loss_reg


def validate(accelerator, model, loader):
    model.eval()
    total, n = 0.0, 0
    for batch in loader:
        with torch.no_grad():
            loss = pf_loss(model, batch)
        total += accelerator.gather(loss.detach()).sum().item()
        n += accelerator.num_processes
    model.train()
    return total / max(n, 1)


def main(epochs=50, batch_size=8, val_batch_size=32):
    accelerator = Accelerator(mixed_precision="bf16")
    train_loader = DataLoader(EventDataset(50_000), batch_size=batch_size, shuffle=True, collate_fn=pad_collate,
                              num_workers=4)
    val_loader = DataLoader(EventDataset(5_000, seed=1), batch_size=val_batch_size, collate_fn=pad_collate,
                            num_workers=4)
    model = ParticleFlowNet()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model, opt, train_loader, val_loader = accelerator.prepare(model, opt, train_loader, val_loader)
    for epoch in range(epochs):
        for batch in train_loader:
            loss = pf_loss(model, batch)
            accelerator.backward(loss)
            opt.step()
            opt.zero_grad()
        val_loss = validate(accelerator, model, val_loader)
        accelerator.print(f"epoch {epoch}: val loss {val_loss:.4f}")
        accelerator.save_state(f"checkpoints/epoch_{epoch:03d}")


if __name__ == "__main__":
    main()
