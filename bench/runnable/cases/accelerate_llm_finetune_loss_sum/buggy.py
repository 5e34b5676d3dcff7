"""An LLM fine-tuning loop on accelerate + DeepSpeed sums the loss tensor for its epoch report

Source: https://github.com/ray-project/ray/pull/40940
Style: accelerate
Kind: loss accumulated across steps with the graph
Runnable from: bench/leaks/cases/accelerate_llm_finetune_loss_sum
"""
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class TinyCausalLM(nn.Module):
    """Stands in for the pretrained causal LM: embedding, one GRU layer, LM head."""

    def __init__(self, vocab=512, dim=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.body = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, input_ids, labels):
        hidden, _ = self.body(self.embed(input_ids))
        logits = self.head(hidden[:, :-1])
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1))


def training_function(config):
    torch.manual_seed(0)
    ids = torch.randint(0, 512, (config["batches"] * config["batch_size"], 32))
    loader = DataLoader(TensorDataset(ids), batch_size=config["batch_size"], shuffle=True)
    model = TinyCausalLM()
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"])
    for epoch in range(config["epochs"]):
        model.train()
        loss_sum = torch.tensor(0.0)
        s_epoch = time.time()
        for step, (batch,) in enumerate(loader):
            loss = model(batch, batch)
            loss_sum += loss  # leak: LL101
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if step % 50 == 0:
                print(f"[epoch {epoch} step {step}] loss {loss.item():.4f}")
        mean_loss = loss_sum.item() / (step + 1)
        print(f"epoch {epoch}: mean loss {mean_loss:.4f}, {time.time() - s_epoch:.0f}s")


if __name__ == "__main__":
    training_function({"batch_size": 8, "batches": 200, "lr": 2e-5, "epochs": 1})
