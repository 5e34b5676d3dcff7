"""predict_step returns GPU tensors that Trainer.predict keeps for the whole prediction run

Source: https://github.com/mmcdermott/MEDS_EIC_AR/pull/141
Style: lightning
Kind: device memory grows without a graph: every batch's predictions kept on the GPU
"""
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class RepeatedPredictionDataset(Dataset):
    """Every subject appears n_trajectories times, one generated trajectory each."""

    def __init__(self, subjects, n_trajectories=20):
        self.subjects = subjects
        self.n_trajectories = n_trajectories

    def __len__(self):
        return len(self.subjects) * self.n_trajectories

    def __getitem__(self, idx):
        subject, trajectory = divmod(idx, self.n_trajectories)
        return {"prompt": self.subjects[subject], "subject_idx": subject, "trajectory_idx": trajectory}


class EventGenerator(pl.LightningModule):
    def __init__(self, vocab=4096, dim=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def predict_step(self, batch, batch_idx):
        tokens = batch["prompt"]
        hidden = None
        for _ in range(256):
            out, hidden = self.rnn(self.embed(tokens[:, -1:]), hidden)
            next_token = torch.multinomial(self.head(out[:, -1]).softmax(-1), 1)
            tokens = torch.cat([tokens, next_token], dim=1)
        return {"tokens": tokens, "subject_idxs": batch["subject_idx"], "trajectory_idxs": batch["trajectory_idx"]}  # leak: new:device-accumulation


if __name__ == "__main__":
    subjects = [torch.randint(0, 4096, (64,)) for _ in range(5000)]
    loader = DataLoader(RepeatedPredictionDataset(subjects), batch_size=64)
    trainer = pl.Trainer(accelerator="gpu", devices=1)
    predictions = trainer.predict(EventGenerator(), loader)
    torch.save([{k: v.cpu() for k, v in p.items()} for p in predictions], "trajectories.pt")
