"""@lru_cache(maxsize=1) on a world wrapper's method keeps the agent and its model alive

Source: https://github.com/facebookresearch/ParlAI/pull/2487
Style: plain
Kind: cache on a method keeps the instance (and the model it holds) for ever
"""
from functools import lru_cache

import torch
import torch.nn as nn


class RankerAgent:
    def __init__(self, vocab=8000, dim=512):
        self.model = nn.Sequential(nn.Embedding(vocab, dim), nn.Linear(dim, dim), nn.Tanh(), nn.Linear(dim, vocab))
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)

    def train_step(self, batch):
        logits = self.model(batch[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


class InnerWorld:
    def __init__(self, agent, examples):
        self.agent = agent
        self.examples = examples

    def num_examples(self):
        return len(self.examples)


class BatchWorld:
    """Wraps a world so the training script can ask how much data is left."""

    def __init__(self, inner_world):
        self.inner_world = inner_world

    @lru_cache(maxsize=1)  # leak: LL301
    def num_examples(self):
        return self.inner_world.num_examples()

    def batches(self, batch_size):
        data = self.inner_world.examples
        for start in range(0, len(data), batch_size):
            yield torch.stack(data[start:start + batch_size])


def build_world():
    examples = [torch.randint(0, 8000, (33,)) for _ in range(2048)]
    return BatchWorld(InnerWorld(RankerAgent(), examples))


def train_then_validate(epochs=2):
    world = build_world()
    for epoch in range(epochs):
        for batch in world.batches(64):
            world.inner_world.agent.train_step(batch)
        print(f"epoch {epoch}: {world.num_examples()} examples")
    del world
    # the validation world loads a second copy of the model; the first one is still pinned by the cache
    valid_world = build_world()
    print("validation examples:", valid_world.num_examples())


if __name__ == "__main__":
    train_then_validate()
