"""A stage-2 GPT over image tokens samples a grid during training steps, with autograd recording

Source: https://github.com/thuanz123/enhancing-transformers/issues/7
Style: seq2seq
Kind: periodic sampling (a custom generate) inside the training loop records graphs nobody uses
"""
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F


class CondTransformer(pl.LightningModule):
    def __init__(self, vocab=8192, dim=768, layers=12, seq_len=256, classes=1000):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab + classes, dim)
        self.pos_emb = nn.Parameter(torch.zeros(1, seq_len + 1, dim))
        block = nn.TransformerEncoderLayer(dim, 12, 4 * dim, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(block, layers)
        self.head = nn.Linear(dim, vocab)
        self.vocab, self.seq_len = vocab, seq_len

    def forward(self, codes):
        x = self.tok_emb(codes) + self.pos_emb[:, : codes.shape[1]]
        mask = torch.triu(torch.full((codes.shape[1], codes.shape[1]), float("-inf"), device=codes.device), 1)
        return self.head(self.blocks(x, mask=mask))

    @torch.no_grad()
    def sample(self, cond, top_k=100):
        codes = cond[:, None] + self.vocab
        for _ in range(self.seq_len):
            logits = self(codes)[:, -1]
            v, _ = torch.topk(logits, top_k)
            logits[logits < v[:, [-1]]] = float("-inf")
            codes = torch.cat([codes, torch.multinomial(F.softmax(logits, -1), 1)], dim=1)
        return codes[:, 1:]

    def training_step(self, batch, batch_idx):
        codes, cond = batch
        inp = torch.cat([cond[:, None] + self.vocab, codes[:, :-1]], 1)
        loss = F.cross_entropy(self(inp).reshape(-1, self.vocab), codes.reshape(-1))
        if batch_idx % 500 == 0:
            self.logger.experiment.add_histogram("sampled_codes", self.sample(cond[:4]), self.global_step)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=4.5e-4)


if __name__ == "__main__":
    data = torch.utils.data.TensorDataset(torch.randint(0, 8192, (100_000, 256)), torch.randint(0, 1000, (100_000,)))
    trainer = pl.Trainer(max_epochs=100, gpus=8)
    trainer.fit(CondTransformer(), torch.utils.data.DataLoader(data, batch_size=32, shuffle=True))
